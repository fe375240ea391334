package qlab.bench;

import java.util.concurrent.TimeUnit;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
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
import qlab.engine.train.ComputePeak;
import qlab.engine.util.WorkerPool;

/**
 * The machine's arithmetic ceiling as the Vector API reaches it: multiply-adds per second with
 * every operand in registers, for the two instructions the kernels are built on — the f32 fused
 * multiply-add (the prefill tile, the f32-activation kernels) and the 16-bit multiply followed by a
 * 16-bit add (the int8-activation strips). Each thread runs twelve independent chains, enough to
 * cover the latency of either, so the figure is throughput, not latency.
 * The {@code macs} counter is multiply-adds per second (one per lane per step); divide a kernel's
 * multiply-adds per second by it for its share of the peak. The nominal clock a VM reports is no
 * guide: these cores run faster than it under load.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-modules", "jdk.incubator.vector"})
public class ComputePeakBenchmark {
    private static final VectorSpecies<Float> FLOATS = FloatVector.SPECIES_PREFERRED;
    private static final VectorSpecies<Short> SHORTS = ShortVector.SPECIES_PREFERRED;
    /** Steps per call and thread: long enough that the hand-off to the threads is noise. */
    private static final int STEPS = 1 << 20;
    private static final int CHAINS = 12;

    @Param({"1", "2"})
    public int threads;

    private WorkerPool pool;
    private final float[] floatSink = new float[64];
    private final short[] shortSink = new short[64];

    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class Work {
        public long macs;
    }

    @Setup(Level.Trial)
    public void setUp() {
        pool = new WorkerPool(threads);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        pool.close();
    }

    @Benchmark
    public void f32Fma(Work work) {
        pool.forRange(threads, 1, (start, end) -> {
            for (int t = start; t < end; t++) {
                floatSink[t] += fmaChains(STEPS, t + 1);
            }
        });
        work.macs += (long) threads * STEPS * CHAINS * FLOATS.length();
    }

    @Benchmark
    public void i16MulAdd(Work work) {
        pool.forRange(threads, 1, (start, end) -> {
            for (int t = start; t < end; t++) {
                shortSink[t] += mulAddChains(STEPS, (short) (t + 1));
            }
        });
        work.macs += (long) threads * STEPS * CHAINS * SHORTS.length();
    }

    /**
     * Twelve chains of a = x × y + a in f32 ({@link ComputePeak#fmaChains}, which training's
     * fraction-of-peak figure measures too): one vfmadd each per step, the chain running through the
     * addend as a kernel's accumulators do (through the multiplicand, a = a × y + z, the same loop
     * measured a third slower here: 33.8 against 49.6 G/s on one thread).
     */
    static float fmaChains(int steps, float seed) {
        return ComputePeak.fmaChains(steps, seed);
    }

    /** Twelve chains of a = a × y + z in 16-bit lanes (wrapping): one vpmullw and one vpaddw each per step. */
    static short mulAddChains(int steps, short seed) {
        ShortVector y = ShortVector.broadcast(SHORTS, (short) 3);
        ShortVector z = ShortVector.broadcast(SHORTS, (short) 5);
        ShortVector a0 = ShortVector.broadcast(SHORTS, seed), a1 = a0.add((short) 1), a2 = a0.add((short) 2);
        ShortVector a3 = a0.add((short) 3), a4 = a0.add((short) 4), a5 = a0.add((short) 5), a6 = a0.add((short) 6);
        ShortVector a7 = a0.add((short) 7), a8 = a0.add((short) 8), a9 = a0.add((short) 9), a10 = a0.add((short) 10);
        ShortVector a11 = a0.add((short) 11);
        for (int i = 0; i < steps; i++) {
            a0 = a0.mul(y).add(z); a1 = a1.mul(y).add(z); a2 = a2.mul(y).add(z); a3 = a3.mul(y).add(z);
            a4 = a4.mul(y).add(z); a5 = a5.mul(y).add(z); a6 = a6.mul(y).add(z); a7 = a7.mul(y).add(z);
            a8 = a8.mul(y).add(z); a9 = a9.mul(y).add(z); a10 = a10.mul(y).add(z); a11 = a11.mul(y).add(z);
        }
        return a0.add(a1).add(a2).add(a3).add(a4).add(a5).add(a6).add(a7).add(a8).add(a9).add(a10).add(a11)
                .reduceLanes(VectorOperators.ADD);
    }
}
