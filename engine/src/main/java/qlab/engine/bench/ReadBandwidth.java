package qlab.engine.bench;

import static qlab.engine.tensor.VectorSupport.F;
import static qlab.engine.tensor.VectorSupport.LANES;

import java.util.Arrays;
import jdk.incubator.vector.FloatVector;
import qlab.engine.util.WorkerPool;

/**
 * The machine's sustained read bandwidth, measured the way a decode step reads weights: each
 * thread streams its own slice of a buffer far larger than the caches, summing it with vector
 * loads (four independent streams per thread). It is the physical limit decode figures are
 * divided by.
 */
public final class ReadBandwidth {

    /** Median, min and max GB/s (10^9 bytes per second) over the passes. */
    public record Result(double medianGbs, double minGbs, double maxGbs, long bufferBytes, int threads) {}

    private ReadBandwidth() {}

    public static Result measure(WorkerPool pool, long bufferBytes, int passes) {
        int n = (int) Math.min(Integer.MAX_VALUE - 64, bufferBytes / 4);
        n -= n % (4 * LANES * pool.threads());
        // Several arrays, so one larger than 2^31 bytes is possible and slices stay independent.
        int parts = pool.threads() * 4;
        float[][] buf = new float[parts][n / parts];
        for (float[] b : buf) {
            Arrays.fill(b, 1f); // touch every page before timing
        }
        double[] gbs = new double[passes];
        float[] sink = new float[parts];
        for (int p = -1; p < passes; p++) {
            long t0 = System.nanoTime();
            pool.forEach(parts, i -> sink[i] += sum(buf[i]));
            long dt = System.nanoTime() - t0;
            if (p >= 0) {
                gbs[p] = (double) parts * buf[0].length * 4 / dt;
            }
        }
        if (Float.isNaN(sink[0])) {
            throw new IllegalStateException("unreachable: keeps the sums alive");
        }
        double[] sorted = gbs.clone();
        Arrays.sort(sorted);
        return new Result(median(sorted), sorted[0], sorted[sorted.length - 1], (long) parts * buf[0].length * 4, pool.threads());
    }

    private static float sum(float[] a) {
        FloatVector s0 = FloatVector.zero(F), s1 = s0, s2 = s0, s3 = s0;
        int quarter = a.length / 4 - (a.length / 4) % LANES;
        for (int i = 0; i < quarter; i += LANES) {
            s0 = s0.add(FloatVector.fromArray(F, a, i));
            s1 = s1.add(FloatVector.fromArray(F, a, quarter + i));
            s2 = s2.add(FloatVector.fromArray(F, a, 2 * quarter + i));
            s3 = s3.add(FloatVector.fromArray(F, a, 3 * quarter + i));
        }
        return s0.add(s1).add(s2).add(s3).reduceLanes(jdk.incubator.vector.VectorOperators.ADD);
    }

    public static double median(double[] sorted) {
        int m = sorted.length / 2;
        return sorted.length % 2 == 1 ? sorted[m] : (sorted[m - 1] + sorted[m]) / 2;
    }
}
