package qlab.bench;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import qlab.engine.util.HugePages;
import qlab.engine.util.WorkerPool;
import qlab.quant.Formats;
import qlab.quant.QuantFormat;
import qlab.quant.QuantizedMatrix;

/**
 * Matrix × vector (one decode token) per format at the Qwen2.5-0.5B decode shapes.
 *
 * <ul>
 *   <li>{@code cache=hot}: one matrix, multiplied again and again; small shapes then sit in L2/L3.</li>
 *   <li>{@code cache=cold}: a ring of distinct copies totalling more than {@link #COLD_BYTES}, so each
 *       product streams its weights from DRAM as in a real decode (the 480 MiB "L3" this machine
 *       reports is shared with the host; 640 MiB of copies is beyond it).</li>
 *   <li>{@code memory=native}: weights in an off-heap segment (as when memory-mapped);
 *       {@code heap}: the same bytes in a {@code byte[]} viewed as a segment.</li>
 * </ul>
 *
 * Score: products per second; the {@code bytes} counter is the bytes the kernels read per second
 * (codes plus scales, as the kernels store them), i.e. the effective bandwidth. Compare with {@link ReadBandwidthBenchmark}.
 * With {@code -p tokens=64} each product multiplies 64 activation rows (a prefill), and the
 * {@code macs} counter gives the multiply-adds per second the batched kernels reach.
 * Run e.g. {@code ./qlab run-bench org.openjdk.jmh.Main MatVecBenchmark}: the launcher gives the
 * JVM (and JMH's forks, which inherit its options) transparent huge pages for the heap, where the
 * int8 strips live; a plain {@code java -cp ...} leaves them on 4 KiB pages, and the cold int8
 * figures then measure that.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED", "-Xmx6g"})
public class MatVecBenchmark {
    static final long COLD_BYTES = 640L << 20;

    @Param({"f32", "f16", "bf16", "q8_0", "q4_0", "q4_8", "q4_8g64", "q2_8", "tq2_8", "b1_8", "q2_0", "tq2_0", "b1_0", "int8", "int4"})
    public String format;

    /** rows x cols: q/o, k/v, gate/up, down, LM head. */
    @Param({"896x896", "128x896", "4864x896", "896x4864", "151936x896"})
    public String shape;

    @Param({"hot", "cold"})
    public String cache;

    @Param({"f32", "int8"})
    public String activations;

    /**
     * Where the weights live: {@code native} off-heap as the engine keeps them (2 MiB pages where
     * the system gives them, {@link HugePages}), {@code native4k} off-heap on ordinary 4 KiB pages
     * (a memory-mapped file's), {@code heap} in a Java array.
     */
    @Param({"native"})
    public String memory;

    @Param({"1"})
    public int threads;

    /**
     * Activation rows per product: 1 is a decode step; more is prefill or batched decode, where
     * the batched kernels read each weight once for all rows and compute, not memory, bounds them.
     */
    @Param({"1"})
    public int tokens;

    /** Batched products (tokens > 1) of integer formats: the dequantized tile, or the exact block kernels. */
    @Param({"exact"})
    public String batched;

    private QuantizedMatrix[] ring;
    private int next;
    private float[] x;
    private float[] y;
    private WorkerPool pool;

    /** Bytes read by the kernels and multiply-adds done, reported per second. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class Traffic {
        public long bytes;
        public long macs;
    }

    @Setup(Level.Trial)
    public void setUp() {
        String[] dims = shape.split("x");
        int rows = Integer.parseInt(dims[0]);
        int cols = Integer.parseInt(dims[1]);
        QuantFormat f = Formats.byName(format);
        pool = new WorkerPool(threads);
        Random rnd = new Random(1);
        float[] w = new float[rows * cols];
        for (int i = 0; i < w.length; i++) {
            w[i] = (float) rnd.nextGaussian() * 0.02f;
        }
        QuantizedMatrix source;
        try (WorkerPool quantizers = new WorkerPool(2)) {
            source = QuantizedMatrix.quantize(f, w, rows, cols, null, quantizers);
        }
        long bytes = source.storageBytes();
        int copies = cache.equals("hot") ? 1 : (int) Math.max(2, (COLD_BYTES + bytes - 1) / bytes);
        boolean int8 = activations.equals("int8");
        if (int8 && !f.isInteger()) {
            throw new IllegalArgumentException(format + " has no int8-activation path; skip this combination");
        }
        ring = new QuantizedMatrix[copies];
        Arena arena = Arena.ofAuto();
        for (int i = 0; i < copies; i++) {
            MemorySegment copy = switch (memory) {
                case "heap" -> MemorySegment.ofArray(new byte[Math.toIntExact(bytes)]);
                case "native4k" -> arena.allocate(bytes, 64);
                case "native" -> HugePages.allocate(bytes);
                default -> throw new IllegalArgumentException("memory: heap, native or native4k, not " + memory);
            };
            copy.copyFrom(source.data());
            ring[i] = new QuantizedMatrix(f, copy, rows, cols, int8, batched.equals("tiled") ? 2 : Integer.MAX_VALUE);
        }
        x = new float[tokens * cols];
        for (int i = 0; i < x.length; i++) {
            x[i] = (float) rnd.nextGaussian();
        }
        y = new float[tokens * rows];
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        pool.close();
    }

    @Benchmark
    public float matVec(Traffic traffic) {
        QuantizedMatrix m = ring[next];
        next = next + 1 == ring.length ? 0 : next + 1;
        int n = tokens;
        Object prepared = m.prepare(x, n);
        float[] out = y;
        pool.forRange(m.rows(), m.rowGrain(prepared), (start, end) -> m.matmul(x, prepared, n, out, m.rows(), 0, start, end));
        traffic.bytes += m.byteSize();
        traffic.macs += (long) m.rows() * m.cols() * n;
        return out[0];
    }
}
