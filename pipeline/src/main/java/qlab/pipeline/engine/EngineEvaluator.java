package qlab.pipeline.engine;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import java.util.TreeMap;
import qlab.engine.QlabException;
import qlab.engine.bench.BatchBench;
import qlab.engine.bench.MachineInfo;
import qlab.engine.bench.SingleStreamBench;
import qlab.engine.data.Datasets;
import qlab.engine.eval.KlDivergence;
import qlab.engine.eval.LogProbBaseline;
import qlab.engine.eval.ScoringMode;
import qlab.engine.gguf.GgufFile;
import qlab.engine.gguf.GgufTokenizer;
import qlab.engine.model.Model;
import qlab.engine.model.ModelHash;
import qlab.engine.model.Transformer;
import qlab.engine.synthetic.SyntheticModelDirectory;
import qlab.engine.synthetic.SyntheticPreset;
import qlab.engine.tokenizer.Tokenizer;
import qlab.engine.util.WorkerPool;
import qlab.pipeline.CalibrationSet;
import qlab.pipeline.EvalSettings;
import qlab.pipeline.Evaluator;
import qlab.pipeline.ModelSpec;
import qlab.pipeline.PreparedModel;
import qlab.pipeline.QualityMeasurement;
import qlab.pipeline.QuantSpec;
import qlab.pipeline.QuantizedCheckpoint;
import qlab.pipeline.ThroughputMeasurement;
import qlab.pipeline.ThroughputSettings;
import qlab.quant.checkpoint.GgufCheckpoint;
import qlab.quant.checkpoint.QuantPlan;
import qlab.quant.imatrix.ImportanceMatrix;
import qlab.quant.imatrix.LlamaImatrix;

/**
 * The sweep worker backed by qlab's own engine, quantizers and measurements. Quality runs on all
 * cores (it is deterministic, so concurrent workers only share time); throughput builds a pool of
 * exactly the thread count the config names.
 *
 * <p>Keeps the most recently used fp32 model in memory (a sweep quantizes one model many times)
 * and the fp32 reference log-probabilities on disk under its cache directory, keyed by content
 * hashes of model, text, context and scoring mode. Quantized checkpoints are loaded afresh for each
 * measurement, with the activation path the config asks for and never from the
 * {@code qlab.quant.activations} property (configs of both kinds run side by side in one JVM), so an
 * f32 and an int8 measurement of one checkpoint file never share a loaded model.
 */
public final class EngineEvaluator implements Evaluator {

    private static final Map<String, Object> BASELINE_LOCKS = new java.util.concurrent.ConcurrentHashMap<>();

    private final Path cacheDir;
    private final WorkerPool pool;
    private String loadedLocation;
    private Model loaded;

    public EngineEvaluator(Path cacheDir) {
        this.cacheDir = cacheDir;
        this.pool = new WorkerPool(Runtime.getRuntime().availableProcessors());
    }

    @Override
    public PreparedModel prepareModel(ModelSpec spec) throws IOException {
        Path dir;
        String id;
        if (spec.isPreset()) {
            SyntheticPreset preset = SyntheticPreset.byId(spec.preset());
            id = preset.id() + "@seed" + spec.seed();
            dir = cacheDir.resolve("models").resolve(preset.id() + "-seed" + spec.seed());
            if (!Files.isRegularFile(dir.resolve("model.safetensors"))) {
                // Generate into a temporary directory and rename: a killed sweep never leaves half a model.
                Path tmp = Files.createDirectories(dir.getParent()).resolve(dir.getFileName() + "." + ProcessHandle.current().pid()
                        + "-" + Thread.currentThread().threadId() + ".tmp");
                deleteTree(tmp);
                SyntheticModelDirectory.write(preset, spec.seed(), tmp, Datasets.ofCheckout());
                try {
                    Files.move(tmp, dir, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
                } catch (java.nio.file.FileAlreadyExistsException | java.nio.file.DirectoryNotEmptyException raced) {
                    deleteTree(tmp); // another worker generated the same model first: identical bytes
                }
            }
        } else {
            dir = Path.of(spec.path());
            id = dir.getFileName().toString();
            if (GgufCheckpoint.isGguf(dir)) {
                // Its tensors are widened or dequantized to f32 and the sweep quantizes from those: the id says so.
                id += " (dequantized to f32)";
            }
        }
        Model m = model(dir.toString());
        return new PreparedModel(id, ModelHash.of(dir), m.config().parameterCount(), dir.toString());
    }

    @Override
    public void computeImportance(PreparedModel model, CalibrationSet calibration, Path target) {
        Tokenizer tok = tokenizer(model);
        List<int[]> texts = new ArrayList<>();
        List<String> hashes = new ArrayList<>();
        for (String f : calibration.files()) {
            int[] ids = tok.encode(read(Path.of(f)));
            texts.add(ids);
            hashes.add(ModelHash.ofTokens(ids));
        }
        ImportanceMatrix.calibrate(new Transformer(model(model.location()), pool), texts, hashes, 512, model.modelHash())
                .save(target);
    }

    @Override
    public QuantizedCheckpoint quantize(PreparedModel model, QuantSpec spec, Path importance, Path target) throws IOException {
        QuantPlan plan = plan(spec);
        Model source = model(model.location());
        ImportanceMatrix im = null;
        if (importance != null) {
            im = LlamaImatrix.load(importance);
            im.checkAgainst(source.config(), importance);
        }
        Model q = qlab.quant.checkpoint.QuantizedCheckpoint.quantize(source, plan, im, pool);
        Map<String, String> provenance = new LinkedHashMap<>();
        provenance.put("source", model.location());
        provenance.put("source_hash", model.modelHash());
        provenance.put("plan", plan.toString());
        provenance.put("imatrix", importance == null ? "none" : ModelHash.of(importance));
        qlab.quant.checkpoint.QuantizedCheckpoint.write(q, provenance, target);
        var entries = qlab.quant.checkpoint.QuantizedCheckpoint.entries(q);
        return new QuantizedCheckpoint(target.toString(), Files.size(target),
                qlab.quant.checkpoint.QuantizedCheckpoint.bitsPerWeight(entries));
    }

    /** The pipeline's mix (base format, one group size, per-class overrides) as a quantization plan. */
    static QuantPlan plan(QuantSpec spec) {
        StringBuilder text = new StringBuilder(withGroup(spec.format(), spec.groupSize()));
        spec.overrides().forEach((role, format) -> text.append('+').append(role).append('=').append(withGroup(format, spec.groupSize())));
        return QuantPlan.parse(text.toString());
    }

    private static String withGroup(String format, Integer group) {
        if (group == null || qlab.quant.Formats.whyUnsupported(format, group).isPresent()) {
            return format;
        }
        return format + "/g" + group;
    }

    @Override
    public QualityMeasurement measureQuality(PreparedModel model, QuantizedCheckpoint checkpoint, boolean int8Activations,
                                             EvalSettings eval) {
        int[] tokens = tokenizer(model).encode(read(Path.of(eval.textPath())));
        if (eval.tokens() > 0 && tokens.length > eval.tokens()) {
            tokens = Arrays.copyOf(tokens, eval.tokens());
        }
        ScoringMode mode = ScoringMode.SECOND_HALF;
        String key = ModelHash.ofStrings("qlab-logprob-baseline-v1", model.modelHash(), ModelHash.ofTokens(tokens),
                Integer.toString(eval.ctx()), mode.id(), "FULL", "0");
        Path file = cacheDir.resolve("baselines").resolve(key.substring(0, 32) + ".lpb");
        LogProbBaseline base;
        // Quality workers run side by side and ask for the same reference: compute it once per process.
        synchronized (BASELINE_LOCKS.computeIfAbsent(file.toAbsolutePath().toString(), k -> new Object())) {
            base = Files.isRegularFile(file) ? LogProbBaseline.open(file)
                    : LogProbBaseline.create(new Transformer(model(model.location()), pool), tokens, eval.ctx(), mode,
                            LogProbBaseline.Kind.FULL, 0, key, file);
        }
        Model q = qlab.quant.checkpoint.QuantizedCheckpoint.load(Path.of(checkpoint.path()), int8Activations);
        KlDivergence.Result r = KlDivergence.compare(new Transformer(q, pool), base, tokens, eval.ctx(), mode);
        return new QualityMeasurement(r.pplModel(), r.pplModelSe(), r.kl().mean(), r.kl().se(), r.kl().percentile(0.99),
                r.top1Agree());
    }

    @Override
    public ThroughputMeasurement measureThroughput(PreparedModel model, QuantizedCheckpoint checkpoint,
            boolean int8Activations, int threads, ThroughputSettings settings) {
        Model q = qlab.quant.checkpoint.QuantizedCheckpoint.load(Path.of(checkpoint.path()), int8Activations);
        Double prefill = null;
        Double median = null;
        Double min = null;
        Double max = null;
        Map<Integer, Double> batch = null;
        try (WorkerPool p = new WorkerPool(threads)) {
            Transformer tf = new Transformer(q, p);
            int reps = Math.max(1, settings.repeats());
            if (settings.singleStream()) {
                SingleStreamBench.Result r = SingleStreamBench.run(tf, settings.prefillTokens(), settings.decodeTokens(), reps, 42);
                prefill = r.prefillTps().median();
                median = r.decodeTps().median();
                min = r.decodeTps().min();
                max = r.decodeTps().max();
            }
            if (settings.batched()) {
                batch = new TreeMap<>();
                for (int b : settings.batchSizes()) {
                    batch.put(b, BatchBench.run(tf, b, Math.max(1, settings.prefillTokens() / 2), settings.decodeTokens(), reps, 7)
                            .tps().median());
                }
            }
        }
        return new ThroughputMeasurement(prefill, median, min, max, batch, MachineInfo.peakRssBytes());
    }

    @Override
    public void release() {
        loaded = null;
        loadedLocation = null;
    }

    @Override
    public void close() {
        pool.close();
        release();
    }

    // ----------------------------------------------------------------------------------------

    private Model model(String location) {
        if (!location.equals(loadedLocation)) {
            loaded = null; // let the previous model go before loading the next
            Path p = Path.of(location);
            loaded = GgufCheckpoint.isGguf(p) ? GgufCheckpoint.load(p, false, true) : Model.load(p);
            loadedLocation = location;
        }
        return loaded;
    }

    private static Tokenizer tokenizer(PreparedModel model) {
        Path location = Path.of(model.location());
        if (GgufCheckpoint.isGguf(location)) {
            GgufFile f = GgufCheckpoint.open(location);
            if (!GgufTokenizer.present(f)) {
                throw new QlabException(model.location() + ": no tokenizer.ggml metadata; the sweep scores text and needs one");
            }
            return GgufTokenizer.read(f);
        }
        Path t = location.resolve("tokenizer.json");
        if (!Files.isRegularFile(t)) {
            throw new QlabException(model.location() + ": no tokenizer.json; the sweep scores text and needs one");
        }
        return Tokenizer.load(t);
    }

    private static String read(Path p) {
        try {
            String s = Files.readString(p);
            if (s.isBlank()) {
                throw new QlabException(p + ": the text is empty");
            }
            return s;
        } catch (IOException e) {
            throw new QlabException(p + ": cannot read: " + e.getMessage());
        }
    }

    private static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (var walk = Files.walk(dir)) {
            for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }

}
