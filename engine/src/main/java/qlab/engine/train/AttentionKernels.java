package qlab.engine.train;

import static qlab.engine.tensor.VectorSupport.F;
import static qlab.engine.tensor.VectorSupport.LANES;

import jdk.incubator.vector.FloatVector;
import qlab.engine.tensor.VectorSupport;

/**
 * Attention kernels of training beside the engine's {@code FloatKernels.weightedRows} (which
 * training calls too, the weights read from an offset: a row of the probability matrix, a column
 * of dS kept transposed): {@link #columnDots}, out[j] = q · k_j for a row of keys held transposed
 * (one key per lane), so a vector of scores costs one FMA per head dimension and no lane sums, with
 * its scalar reference, bitwise equal (an fma fold in a fixed order from zero on every path).
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
}
