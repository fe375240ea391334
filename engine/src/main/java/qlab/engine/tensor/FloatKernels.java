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
}
