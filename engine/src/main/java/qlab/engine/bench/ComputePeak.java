package qlab.engine.bench;

import static qlab.engine.tensor.VectorSupport.F;

import java.util.Arrays;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import qlab.engine.util.WorkerPool;

/**
 * The machine's f32 multiply-add ceiling as the Vector API reaches it: every thread runs twelve
 * independent FMA chains with all operands in registers (enough chains to cover the instruction's
 * latency), so the figure is throughput. It is the compute limit prefill and batched decode figures
 * are divided by, as {@link ReadBandwidth} is the memory limit. One multiply-add per lane per step.
 */
public final class ComputePeak {

    /** Median, min and max in 10^9 multiply-adds per second over the passes. */
    public record Result(double medianGmacs, double minGmacs, double maxGmacs, int threads) {}

    /** Steps per pass and thread: about 10 ms on one AVX-512 core, long enough that the hand-off is noise. */
    static final int STEPS = 1 << 21;
    static final int CHAINS = 12;

    private ComputePeak() {}

    public static Result measure(WorkerPool pool, int passes) {
        int threads = pool.threads();
        float[] sink = new float[threads];
        double[] rates = new double[passes];
        for (int p = -2; p < passes; p++) { // two warm-up passes: the loop is compiled by then
            long t0 = System.nanoTime();
            pool.forEach(threads, t -> sink[t] += fmaChains(STEPS, t + 1));
            long dt = System.nanoTime() - t0;
            if (p >= 0) {
                rates[p] = (double) threads * STEPS * CHAINS * F.length() / dt;
            }
        }
        if (Float.isNaN(sink[0])) {
            throw new IllegalStateException("unreachable: keeps the sums alive");
        }
        Arrays.sort(rates);
        return new Result(ReadBandwidth.median(rates), rates[0], rates[passes - 1], threads);
    }

    /**
     * Twelve chains of a = x × y + a: one vector FMA each per step, the chain running through the
     * addend as a kernel's accumulators do (through the multiplicand, a = a × y + z, the same loop
     * measured a third slower: 33.8 against 49.6 G/s on one thread).
     */
    public static float fmaChains(int steps, float seed) {
        FloatVector x = FloatVector.broadcast(F, 0.5f);
        FloatVector y = FloatVector.broadcast(F, 0.001f);
        FloatVector a0 = FloatVector.broadcast(F, seed), a1 = a0.add(1), a2 = a0.add(2), a3 = a0.add(3);
        FloatVector a4 = a0.add(4), a5 = a0.add(5), a6 = a0.add(6), a7 = a0.add(7);
        FloatVector a8 = a0.add(8), a9 = a0.add(9), a10 = a0.add(10), a11 = a0.add(11);
        for (int i = 0; i < steps; i++) {
            a0 = x.fma(y, a0); a1 = x.fma(y, a1); a2 = x.fma(y, a2); a3 = x.fma(y, a3);
            a4 = x.fma(y, a4); a5 = x.fma(y, a5); a6 = x.fma(y, a6); a7 = x.fma(y, a7);
            a8 = x.fma(y, a8); a9 = x.fma(y, a9); a10 = x.fma(y, a10); a11 = x.fma(y, a11);
        }
        return a0.add(a1).add(a2).add(a3).add(a4).add(a5).add(a6).add(a7).add(a8).add(a9).add(a10).add(a11)
                .reduceLanes(VectorOperators.ADD);
    }
}
