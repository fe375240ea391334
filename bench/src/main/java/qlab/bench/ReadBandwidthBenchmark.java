package qlab.bench;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.DoubleAdder;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;
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

/**
 * The machine's read bandwidth as a Java kernel sees it: sum a 1 GiB off-heap buffer (far beyond
 * any cache) with full-width vector loads and four independent accumulators, split over the threads.
 * The {@code bytes} counter is bytes read per second: the ceiling for {@link MatVecBenchmark}'s cold runs.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED"})
public class ReadBandwidthBenchmark {
    /** The CPU's own width: a wider species than the hardware has is emulated, not measured. */
    private static final VectorSpecies<Float> FLOATS = FloatVector.SPECIES_PREFERRED;
    private static final int VECTOR_BYTES = FLOATS.vectorByteSize();
    private static final long SIZE = 1L << 30;
    private static final int CHUNK = 1 << 20;

    @Param({"1", "2"})
    public int threads;

    /** {@code native}: 2 MiB pages where the system gives them ({@link HugePages}), as the engine's weights; {@code native4k}: 4 KiB pages. */
    @Param({"native"})
    public String memory;

    private MemorySegment buffer;
    private WorkerPool pool;

    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class Traffic {
        public long bytes;
    }

    @Setup(Level.Trial)
    public void setUp() {
        buffer = switch (memory) {
            case "native" -> HugePages.allocate(SIZE);
            case "native4k" -> Arena.ofAuto().allocate(SIZE, 64);
            default -> throw new IllegalArgumentException("memory: native or native4k, not " + memory);
        };
        buffer.fill((byte) 1);
        pool = new WorkerPool(threads);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        pool.close();
    }

    @Benchmark
    public double readAll(Traffic traffic) {
        DoubleAdder total = new DoubleAdder();
        pool.forRange((int) (SIZE / CHUNK), 1, (start, end) -> {
            FloatVector a0 = FloatVector.zero(FLOATS);
            FloatVector a1 = a0;
            FloatVector a2 = a0;
            FloatVector a3 = a0;
            for (long off = (long) start * CHUNK; off < (long) end * CHUNK; off += 4 * VECTOR_BYTES) {
                a0 = a0.add(FloatVector.fromMemorySegment(FLOATS, buffer, off, ByteOrder.LITTLE_ENDIAN));
                a1 = a1.add(FloatVector.fromMemorySegment(FLOATS, buffer, off + VECTOR_BYTES, ByteOrder.LITTLE_ENDIAN));
                a2 = a2.add(FloatVector.fromMemorySegment(FLOATS, buffer, off + 2 * VECTOR_BYTES, ByteOrder.LITTLE_ENDIAN));
                a3 = a3.add(FloatVector.fromMemorySegment(FLOATS, buffer, off + 3 * VECTOR_BYTES, ByteOrder.LITTLE_ENDIAN));
            }
            total.add(a0.add(a1).add(a2).add(a3).reduceLanes(jdk.incubator.vector.VectorOperators.ADD));
        });
        traffic.bytes += SIZE;
        return total.sum();
    }
}
