package qlab.engine.train;

import static qlab.engine.tensor.VectorSupport.F;

import jdk.incubator.vector.FloatVector;
import qlab.engine.tensor.VectorSupport;
import qlab.engine.util.WorkerPool;

/**
 * The f32 multiply-add ceiling the Vector API reaches on the pool's threads, measured the way the
 * bench module's {@code ComputePeakBenchmark} measures it (twelve independent FMA chains per thread,
 * every operand in registers), so training reports its products' multiply-adds per second as a
 * share of the same figure without depending on JMH. Best of a few short rounds.
 */
public final class ComputePeak {

    private static final int CHAINS = 12;
    private static final int STEPS = 1 << 22;

    private ComputePeak() {}

    /** Multiply-adds per second of all the pool's threads together. */
    public static double measure(WorkerPool pool, int rounds) {
        int threads = pool.threads();
        float[] sink = new float[threads];
        double best = 0;
        for (int r = 0; r < rounds + 1; r++) { // round 0 warms the JIT up
            long t0 = System.nanoTime();
            pool.forRange(threads, 1, (s, e) -> {
                for (int t = s; t < e; t++) {
                    sink[t] += fmaChains(STEPS, t + 1);
                }
            });
            double seconds = (System.nanoTime() - t0) / 1e9;
            if (r > 0) {
                best = Math.max(best, (double) threads * STEPS * CHAINS * VectorSupport.LANES / seconds);
            }
        }
        if (sink[0] == 42f) {
            System.out.print(""); // keeps the chains from being optimised away
        }
        return best;
    }

    /** Twelve chains of a = x × y + a, one FMA each per step; returns a sum of them so none is dead code. */
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
        return VectorSupport.sum(a0.add(a1).add(a2).add(a3).add(a4).add(a5).add(a6).add(a7).add(a8).add(a9).add(a10).add(a11));
    }
}
