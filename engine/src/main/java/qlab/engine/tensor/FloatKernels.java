package qlab.engine.tensor;

import static qlab.engine.tensor.VectorSupport.F;
import static qlab.engine.tensor.VectorSupport.LANES;

import jdk.incubator.vector.FloatVector;

/**
 * Small f32 kernels of the forward pass: dot products, scaled accumulation. Each has its scalar
 * reference beside it; tests check they agree.
 */
public final class FloatKernels {

    private FloatKernels() {}

    /** a[ao .. ao+n) · b[bo .. bo+n). Lanes accumulate in order, then a fixed lane sum, then the tail. */
    public static float dot(float[] a, int ao, float[] b, int bo, int n) {
        if (!VectorSupport.ENABLED) {
            return dotScalar(a, ao, b, bo, n);
        }
        int upper = F.loopBound(n);
        FloatVector acc = FloatVector.zero(F);
        for (int i = 0; i < upper; i += LANES) {
            acc = FloatVector.fromArray(F, a, ao + i).fma(FloatVector.fromArray(F, b, bo + i), acc);
        }
        float s = VectorSupport.sum(acc);
        for (int i = upper; i < n; i++) {
            s += a[ao + i] * b[bo + i];
        }
        return s;
    }

    public static float dotScalar(float[] a, int ao, float[] b, int bo, int n) {
        float s = 0;
        for (int i = 0; i < n; i++) {
            s += a[ao + i] * b[bo + i];
        }
        return s;
    }

    /** y[yo .. yo+n) += alpha * x[xo .. xo+n). */
    public static void axpy(float alpha, float[] x, int xo, float[] y, int yo, int n) {
        if (!VectorSupport.ENABLED) {
            axpyScalar(alpha, x, xo, y, yo, n);
            return;
        }
        int upper = F.loopBound(n);
        FloatVector a = FloatVector.broadcast(F, alpha);
        for (int i = 0; i < upper; i += LANES) {
            FloatVector.fromArray(F, x, xo + i).fma(a, FloatVector.fromArray(F, y, yo + i)).intoArray(y, yo + i);
        }
        for (int i = upper; i < n; i++) {
            y[yo + i] = Math.fma(alpha, x[xo + i], y[yo + i]);
        }
    }

    public static void axpyScalar(float alpha, float[] x, int xo, float[] y, int yo, int n) {
        for (int i = 0; i < n; i++) {
            y[yo + i] = Math.fma(alpha, x[xo + i], y[yo + i]);
        }
    }

    /**
     * y[yo .. yo+n) = Σ_j (w[wo + j] × scale) · x[xo + j × stride ..], j = 0 .. rows − 1: attention's
     * weighted sum of value rows (training also sums key and query rows with it). Bitwise {@link #weightedRowsScalar} (an fma per row, in row
     * order, from zero), i.e. zeroing y then {@link #axpy} row by row; but the sums stay in
     * registers, four vectors of y at a time, instead of being stored and reloaded for every row:
     * a 512-bit store is two 256-bit ones on AMD Zen 4, and the next row's load of it waits for
     * both to reach the cache instead of being forwarded.
     */
    public static void weightedRows(float[] w, int wo, int rows, float scale, float[] x, int xo, int stride, float[] y,
                                    int yo, int n) {
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
        // heads of two vectors (32 wide at 16 lanes) in two independent chains
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

    public static void weightedRowsScalar(float[] w, int wo, int rows, float scale, float[] x, int xo, int stride, float[] y,
                                          int yo, int n) {
        java.util.Arrays.fill(y, yo, yo + n, 0f);
        for (int j = 0; j < rows; j++) {
            axpyScalar(w[wo + j] * scale, x, xo + j * stride, y, yo, n);
        }
    }
}
