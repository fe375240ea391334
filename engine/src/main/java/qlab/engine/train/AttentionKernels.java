package qlab.engine.train;

import static qlab.engine.tensor.VectorSupport.F;
import static qlab.engine.tensor.VectorSupport.LANES;

import jdk.incubator.vector.FloatVector;
import qlab.engine.tensor.VectorSupport;

/**
 * The two kernels of attention in training, each with its scalar reference:
 * <ul>
 *   <li>{@link #weightedRows}: y = Σ_j (w[wo + j] × scale) · x[xo + j × stride ..], the weights read
 *       from an offset (a row of the probability matrix, a column of dS kept transposed). The
 *       engine's {@code FloatKernels.weightedRows} computes the same fold for inference; this one
 *       also keeps two-vector heads (32 wide with 16 lanes) in two independent chains.
 *   <li>{@link #columnDots}: out[j] = q · k_j for a row of keys held transposed (one key per
 *       lane), so a vector of scores costs one FMA per head dimension and no lane sums.
 * </ul>
 * Each output lane is a fold of fmas in a fixed order from zero, whichever path computes it, so
 * each kernel is bitwise its scalar reference.
 */
final class AttentionKernels {

    private AttentionKernels() {}

    /**
     * out[oo + j] = Σ_i q[qo + i] × kT[i × ld + j] for j in [0, count): the fma fold over i = 0 .. hd − 1.
     * kT holds keys transposed: dimension i of key j at kT[i × ld + j].
     */
    static void columnDots(float[] q, int qo, float[] kT, int ld, int hd, int count, float[] out, int oo) {
        if (!VectorSupport.ENABLED) {
            columnDotsScalar(q, qo, kT, ld, hd, 0, count, out, oo);
            return;
        }
        int j = 0;
        for (; j + 4 * LANES <= count; j += 4 * LANES) {
            FloatVector a0 = FloatVector.zero(F);
            FloatVector a1 = a0;
            FloatVector a2 = a0;
            FloatVector a3 = a0;
            for (int i = 0; i < hd; i++) {
                FloatVector s = FloatVector.broadcast(F, q[qo + i]);
                int o = i * ld + j;
                a0 = s.fma(FloatVector.fromArray(F, kT, o), a0);
                a1 = s.fma(FloatVector.fromArray(F, kT, o + LANES), a1);
                a2 = s.fma(FloatVector.fromArray(F, kT, o + 2 * LANES), a2);
                a3 = s.fma(FloatVector.fromArray(F, kT, o + 3 * LANES), a3);
            }
            a0.intoArray(out, oo + j);
            a1.intoArray(out, oo + j + LANES);
            a2.intoArray(out, oo + j + 2 * LANES);
            a3.intoArray(out, oo + j + 3 * LANES);
        }
        for (; j + LANES <= count; j += LANES) {
            FloatVector a0 = FloatVector.zero(F);
            for (int i = 0; i < hd; i++) {
                a0 = FloatVector.broadcast(F, q[qo + i]).fma(FloatVector.fromArray(F, kT, i * ld + j), a0);
            }
            a0.intoArray(out, oo + j);
        }
        columnDotsScalar(q, qo, kT, ld, hd, j, count, out, oo);
    }

    /** The specification of {@link #columnDots}, for j in [from, count). */
    static void columnDotsScalar(float[] q, int qo, float[] kT, int ld, int hd, int from, int count, float[] out, int oo) {
        for (int j = from; j < count; j++) {
            float acc = 0;
            for (int i = 0; i < hd; i++) {
                acc = Math.fma(q[qo + i], kT[i * ld + j], acc);
            }
            out[oo + j] = acc;
        }
    }

    /** Rows [base, base + len × stride) of width hd, transposed into kT[i × len + j]. */
    static void transpose(float[] x, int base, int stride, int len, int hd, float[] kT) {
        for (int j = 0; j < len; j++) {
            int o = base + j * stride;
            for (int i = 0; i < hd; i++) {
                kT[i * len + j] = x[o + i];
            }
        }
    }

    static void weightedRows(float[] w, int wo, int rows, float scale, float[] x, int xo, int stride, float[] y, int yo,
                             int n) {
        if (!VectorSupport.ENABLED) {
            weightedRowsScalar(w, wo, rows, scale, x, xo, stride, y, yo, n);
            return;
        }
        int i = 0;
        for (; i + 4 * LANES <= n; i += 4 * LANES) {
            FloatVector a0 = FloatVector.zero(F);
            FloatVector a1 = a0;
            FloatVector a2 = a0;
            FloatVector a3 = a0;
            for (int j = 0; j < rows; j++) {
                FloatVector s = FloatVector.broadcast(F, w[wo + j] * scale);
                int o = xo + j * stride + i;
                a0 = FloatVector.fromArray(F, x, o).fma(s, a0);
                a1 = FloatVector.fromArray(F, x, o + LANES).fma(s, a1);
                a2 = FloatVector.fromArray(F, x, o + 2 * LANES).fma(s, a2);
                a3 = FloatVector.fromArray(F, x, o + 3 * LANES).fma(s, a3);
            }
            a0.intoArray(y, yo + i);
            a1.intoArray(y, yo + i + LANES);
            a2.intoArray(y, yo + i + 2 * LANES);
            a3.intoArray(y, yo + i + 3 * LANES);
        }
        for (; i + 2 * LANES <= n; i += 2 * LANES) {
            FloatVector a0 = FloatVector.zero(F);
            FloatVector a1 = a0;
            for (int j = 0; j < rows; j++) {
                FloatVector s = FloatVector.broadcast(F, w[wo + j] * scale);
                int o = xo + j * stride + i;
                a0 = FloatVector.fromArray(F, x, o).fma(s, a0);
                a1 = FloatVector.fromArray(F, x, o + LANES).fma(s, a1);
            }
            a0.intoArray(y, yo + i);
            a1.intoArray(y, yo + i + LANES);
        }
        for (; i + LANES <= n; i += LANES) {
            FloatVector a0 = FloatVector.zero(F);
            for (int j = 0; j < rows; j++) {
                a0 = FloatVector.fromArray(F, x, xo + j * stride + i).fma(FloatVector.broadcast(F, w[wo + j] * scale), a0);
            }
            a0.intoArray(y, yo + i);
        }
        for (; i < n; i++) {
            float acc = 0;
            for (int j = 0; j < rows; j++) {
                acc = Math.fma(w[wo + j] * scale, x[xo + j * stride + i], acc);
            }
            y[yo + i] = acc;
        }
    }

    /** The specification: zero y, then one fma per (row, column), rows in order. */
    static void weightedRowsScalar(float[] w, int wo, int rows, float scale, float[] x, int xo, int stride, float[] y,
                                   int yo, int n) {
        java.util.Arrays.fill(y, yo, yo + n, 0f);
        for (int j = 0; j < rows; j++) {
            float s = w[wo + j] * scale;
            for (int i = 0; i < n; i++) {
                y[yo + i] = Math.fma(s, x[xo + j * stride + i], y[yo + i]);
            }
        }
    }
}
