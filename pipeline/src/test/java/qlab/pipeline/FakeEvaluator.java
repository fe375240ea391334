package qlab.pipeline;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import qlab.pipeline.matrix.ConfigId;

/**
 * A stand-in for the engine in pipeline tests: every number is a closed-form function of the config,
 * so a test can compute the expected row without the pipeline. Failure injection: a format that
 * throws, a format whose perplexity is NaN, and a simulated crash (an Error, which stops the whole
 * pipeline like a killed process) after a number of throughput measurements.
 */
public final class FakeEvaluator implements Evaluator {

    /** Calls per scenario and operation, visible to the test (the DirectRunner runs in-process). */
    public static final Map<String, AtomicInteger> CALLS = new ConcurrentHashMap<>();

    /** Thrown to simulate the process dying mid-sweep: not a config failure, so it stops the pipeline. */
    public static final class SimulatedCrash extends Error {
        public SimulatedCrash(String message) {
            super(message);
        }
    }

    /**
     * @param scenario      namespace for {@link #CALLS}
     * @param failFormats   base formats whose quantization throws
     * @param nanFormats    base formats whose quality comes out NaN
     * @param crashAfter    crash at the throughput measurement after this many (negative: never)
     */
    public record Factory(String scenario, Set<String> failFormats, Set<String> nanFormats, int crashAfter)
            implements EvaluatorFactory {
        public Factory(String scenario) {
            this(scenario, Set.of(), Set.of(), -1);
        }

        /** For {@code --evaluatorFactory=qlab.pipeline.FakeEvaluator$Factory}. */
        public Factory() {
            this("by-class-name");
        }

        @Override
        public Evaluator create(Path cacheDir) {
            count(scenario, "create");
            return new FakeEvaluator(this);
        }
    }

    private final Factory settings;

    /**
     * A sweep whose evaluation token budget is this crashes at its quality measurements (after
     * {@code crashAfter} of them) instead of at throughput: for sweeps that measure quality only.
     */
    public static final int CRASH_AT_QUALITY_TOKENS = 257;

    FakeEvaluator(Factory settings) {
        this.settings = settings;
    }

    public static int calls(String scenario, String operation) {
        AtomicInteger n = CALLS.get(scenario + "/" + operation);
        return n == null ? 0 : n.get();
    }

    /** Evaluator calls running right now, per scenario; throughput must only ever run alone. */
    private static final Map<String, AtomicInteger> ACTIVE = new ConcurrentHashMap<>();

    private void enter() {
        ACTIVE.computeIfAbsent(settings.scenario(), k -> new AtomicInteger()).incrementAndGet();
    }

    private void leave() {
        ACTIVE.get(settings.scenario()).decrementAndGet();
    }

    /** Per throughput measurement, the other threads' CPU time while it slept over the time it slept. */
    private static final Map<String, List<Double>> BESIDE_THROUGHPUT = new ConcurrentHashMap<>();

    /**
     * The median share of a core that the process's other Java threads used while a throughput
     * measurement slept: near 0 when nothing runs beside a measurement, 1 or more when some thread
     * spins (the DirectRunner's driver does, with more than one worker).
     */
    public static double busyBesideThroughput(String scenario) {
        List<Double> t = BESIDE_THROUGHPUT.getOrDefault(scenario, List.of());
        if (t.isEmpty()) {
            return Double.NaN;
        }
        List<Double> sorted;
        synchronized (t) {
            sorted = t.stream().sorted().toList();
        }
        return sorted.get(sorted.size() / 2);
    }

    /** CPU time of every Java thread but this one (the JIT compiler's and the GC's are not Java threads). */
    private static long otherThreadsCpuNanos() {
        java.lang.management.ThreadMXBean threads = java.lang.management.ManagementFactory.getThreadMXBean();
        long self = Thread.currentThread().threadId();
        long sum = 0;
        for (long id : threads.getAllThreadIds()) {
            long t = id == self ? -1 : threads.getThreadCpuTime(id);
            sum += Math.max(t, 0);
        }
        return sum;
    }

    private static int count(String scenario, String operation) {
        return CALLS.computeIfAbsent(scenario + "/" + operation, k -> new AtomicInteger()).incrementAndGet();
    }

    // ---- the closed forms the tests check rows against ----

    public static String modelHash(ModelSpec m) {
        return ConfigId.sha256("fake model " + m.key());
    }

    public static long parameters(ModelSpec m) {
        return m.isPreset() ? 1_000_000L + m.seed() : 2_000_000L;
    }

    /** Nominal bits of a format: payload bits plus a 16-bit scale per group. */
    public static double formatBits(String format, Integer group) {
        return switch (format) {
            case "f32" -> 32;
            case "f16", "bf16" -> 16;
            case "int8" -> 8.0 + 32.0 / 896;
            default -> {
                double payload = format.startsWith("q8") ? 8 : format.startsWith("q4") ? 4
                        : format.startsWith("q2") || format.startsWith("tq2") ? 2 : 1;
                yield payload + 16.0 / group;
            }
        };
    }

    /** A quarter of the weights follow each override (a stand-in for the attention share). */
    public static double bitsPerWeight(QuantSpec q) {
        double bits = formatBits(q.format(), q.groupSize());
        for (String f : q.overrides().values()) {
            bits += 0.25 * (formatBits(f, q.groupSize()) - bits);
        }
        return bits;
    }

    public static long fileBytes(QuantSpec q) {
        return Math.round(bitsPerWeight(q) * 100);
    }

    public static double klMean(QuantSpec q, boolean imatrix) {
        return klMean(q, imatrix, false);
    }

    /** int8 activations add a quarter to the KL (the pipeline never asks for them on float-only mixes). */
    public static double klMean(QuantSpec q, boolean imatrix, boolean int8Activations) {
        return Math.pow(2, -bitsPerWeight(q)) * (imatrix ? 0.75 : 1.0) * (int8Activations ? 1.25 : 1.0);
    }

    public static double ppl(QuantSpec q, boolean imatrix) {
        return ppl(q, imatrix, false);
    }

    public static double ppl(QuantSpec q, boolean imatrix, boolean int8Activations) {
        return 12.0 * (1 + klMean(q, imatrix, int8Activations));
    }

    public static double decodeTps(QuantSpec q, int threads) {
        return decodeTps(q, false, threads);
    }

    /** int8 activations decode a fifth faster. */
    public static double decodeTps(QuantSpec q, boolean int8Activations, int threads) {
        return 4000.0 / bitsPerWeight(q) * threads * (int8Activations ? 1.2 : 1.0);
    }

    public static double batchTps(QuantSpec q, int threads, int batch) {
        return batchTps(q, false, threads, batch);
    }

    public static double batchTps(QuantSpec q, boolean int8Activations, int threads, int batch) {
        return decodeTps(q, int8Activations, threads) * Math.pow(batch, 0.8);
    }

    /** Bytes a decode step reads: a model of a million weights at the format's bits per weight. */
    public static long decodeBytes(QuantSpec q) {
        return Math.round(bitsPerWeight(q) * 1e6 / 8);
    }

    public static double readGbs(int threads) {
        return 20.0 * threads;
    }

    public static double fmaGmacs(int threads) {
        return 50.0 * threads;
    }

    // ---- Evaluator ----

    @Override
    public PreparedModel prepareModel(ModelSpec model) {
        count(settings.scenario(), "prepare");
        return new PreparedModel(model.isPreset() ? model.preset() + "-seed" + model.seed() : model.path(),
                modelHash(model), parameters(model), "fake:" + model.key());
    }

    @Override
    public void computeImportance(PreparedModel model, CalibrationSet calibration, Path target) throws Exception {
        count(settings.scenario(), "imatrix");
        Files.writeString(target, model.modelHash() + " " + calibration.contentHash(), StandardCharsets.UTF_8);
    }

    @Override
    public QuantizedCheckpoint quantize(PreparedModel model, QuantSpec spec, Path importance, Path target)
            throws Exception {
        count(settings.scenario(), "quantize");
        if (settings.failFormats().contains(spec.format())) {
            throw new IllegalStateException("fake quantizer refuses " + spec.format());
        }
        String header = "fake checkpoint " + spec.mixName() + "/" + spec.groupSize()
                + (importance == null ? "" : " imatrix=" + Files.readString(importance)) + "\n";
        byte[] bytes = new byte[(int) fileBytes(spec)];
        byte[] h = header.getBytes(StandardCharsets.UTF_8);
        System.arraycopy(h, 0, bytes, 0, Math.min(h.length, bytes.length));
        Files.write(target, bytes);
        return new QuantizedCheckpoint(target.toString(), bytes.length, bitsPerWeight(spec));
    }

    @Override
    public QualityMeasurement measureQuality(PreparedModel model, QuantizedCheckpoint checkpoint, boolean int8Activations,
                                             KvCacheChoice kvCache, EvalSettings eval) throws Exception {
        int n = count(settings.scenario(), "quality");
        if (settings.crashAfter() >= 0 && n > settings.crashAfter() && eval.tokens() == CRASH_AT_QUALITY_TOKENS) {
            throw new SimulatedCrash("simulated crash at quality measurement " + n);
        }
        enter();
        try {
            // Long enough that quality work running beside a throughput measurement would be seen.
            Thread.sleep(15);
        } finally {
            leave();
        }
        String header = Files.readAllLines(Path.of(checkpoint.path()), StandardCharsets.UTF_8).get(0);
        QuantSpec spec = specFromHeader(header);
        boolean imatrix = header.contains("imatrix=");
        double kl = klMean(spec, imatrix, int8Activations) + kvCacheKl(kvCache);
        double ppl = settings.nanFormats().contains(spec.format()) ? Double.NaN : ppl(spec, imatrix, int8Activations);
        return new QualityMeasurement(ppl, ppl / 100, kl, kl / 10, kl * 5, 1 - kl);
    }

    @Override
    public ThroughputMeasurement measureThroughput(PreparedModel model, QuantizedCheckpoint checkpoint,
                                                   boolean int8Activations, KvCacheChoice kvCache, int threads,
                                                   ThroughputSettings s)
            throws Exception {
        int n = count(settings.scenario(), "throughput");
        enter();
        try {
            if (ACTIVE.get(settings.scenario()).get() != 1) {
                count(settings.scenario(), "throughput-not-alone");
            }
            long cpu = otherThreadsCpuNanos();
            long wall = System.nanoTime();
            // qlab.fake.throughputMillis lengthens a sweep for the fault tests that kill it at random moments.
            Thread.sleep(Long.getLong("qlab.fake.throughputMillis", 40));
            double beside = (double) (otherThreadsCpuNanos() - cpu) / (System.nanoTime() - wall);
            List<Double> all = BESIDE_THROUGHPUT.computeIfAbsent(settings.scenario(), k -> new ArrayList<>());
            synchronized (all) {
                all.add(beside);
            }
        } finally {
            leave();
        }
        if (settings.crashAfter() >= 0 && n > settings.crashAfter()) {
            throw new SimulatedCrash("simulated crash at throughput measurement " + n);
        }
        String header = Files.readAllLines(Path.of(checkpoint.path()), StandardCharsets.UTF_8).get(0);
        QuantSpec spec = specFromHeader(header);
        double tps = decodeTps(spec, int8Activations, threads);
        Map<Integer, Double> batch = new TreeMap<>();
        for (int b : s.batchSizes()) {
            batch.put(b, batchTps(spec, int8Activations, threads, b));
        }
        return new ThroughputMeasurement(tps * 10, tps, tps * 0.9, tps * 1.1, batch, 123_456_789L,
                decodeBytes(spec), readGbs(threads), fmaGmacs(threads));
    }

    /** What a KV cache adds to the KL, in closed form: 0 at f32, more for fewer bits, keys and values each. */
    public static double kvCacheKl(KvCacheChoice kv) {
        return kvTypeKl(kv.keys()) + kvTypeKl(kv.values());
    }

    private static double kvTypeKl(String type) {
        return switch (type) {
            case "f32" -> 0;
            case "f16", "bf16" -> 0.0001;
            case "q8_0" -> 0.001;
            case "q5_0", "q5_1" -> 0.005;
            default -> 0.01;
        };
    }

    /** Reads back "fake checkpoint q4_8+attn=q8_0/128 ..." so quality depends on what was quantized. */
    @Override
    public void release() {
        count(settings.scenario(), "release");
    }

    private static QuantSpec specFromHeader(String header) {
        String mix = header.split(" ")[2];
        String[] mixAndGroup = mix.split("/");
        String[] parts = mixAndGroup[0].split("\\+");
        Map<String, String> overrides = new TreeMap<>();
        for (int i = 1; i < parts.length; i++) {
            String[] kv = parts[i].split("=");
            overrides.put(kv[0], kv[1]);
        }
        Integer group = mixAndGroup[1].equals("null") ? null : Integer.valueOf(mixAndGroup[1]);
        return new QuantSpec(parts[0], group, overrides);
    }
}
