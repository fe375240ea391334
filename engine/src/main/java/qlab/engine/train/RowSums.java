package qlab.engine.train;

import static qlab.engine.tensor.VectorSupport.F;
import static qlab.engine.tensor.VectorSupport.LANES;

import jdk.incubator.vector.FloatVector;
import qlab.engine.tensor.VectorSupport;

/**
 * Attention's weighted sums of rows for training: y = Σ_j (w[wo + j] × scale) · x[xo + j × stride ..],
 * the weights read from an offset (a row of the probability matrix, a column of dS kept transposed).
 * The engine's {@code FloatKernels.weightedRows} computes the same fold for inference; this one
 * also keeps two-vector heads (32 wide with 16 lanes) in two independent chains.
 *
 * <p>Each output lane is the fold acc = fma(w[j] × scale, x[j], acc) over j from zero, whichever
 * path computes it, so the result is bitwise {@link #weightedRowsScalar}.
 */
final class RowSums {

    private RowSums() {}

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
