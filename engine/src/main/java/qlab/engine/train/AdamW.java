package qlab.engine.train;

import qlab.engine.util.WorkerPool;

/**
 * AdamW (Loshchilov and Hutter): Adam's moments with bias correction, and weight decay applied to
 * the weights directly (w −= lr × decay × w), not through the gradient; matrices decay, norms and
 * biases do not. Gradients are first scaled so their global L2 norm is at most the clip value.
 * Element-wise over fixed ranges: the same bits for any thread count.
 */
public final class AdamW {

    private final Parameters m;
    private final Parameters v;
    private final WorkerPool pool;

    public AdamW(Parameters params, WorkerPool pool) {
        this.m = Parameters.zeros(params.config());
        this.v = Parameters.zeros(params.config());
        this.pool = pool;
    }

    public Parameters firstMoment() {
        return m;
    }

    public Parameters secondMoment() {
        return v;
    }

    /** The global L2 norm of the gradients: squares summed in float64, tensor by tensor, element by element. */
    public static double globalNorm(Parameters grads) {
        double ss = 0;
        for (Parameters.Tensor t : grads.list()) {
            for (float g : t.data()) {
                ss += (double) g * g;
            }
        }
        return Math.sqrt(ss);
    }

    /**
     * One update, step t counted from 1.
     *
     * @return the gradient norm before clipping
     */
    public double step(Parameters params, Parameters grads, double lr, double weightDecay, double clip, int t) {
        double norm = globalNorm(grads);
        float gradScale = norm > clip ? (float) (clip / norm) : 1f;
        float b1 = (float) TrainOptions.BETA1;
        float b2 = (float) TrainOptions.BETA2;
        float c1 = (float) (1 - StrictMath.pow(TrainOptions.BETA1, t));
        float c2 = (float) (1 - StrictMath.pow(TrainOptions.BETA2, t));
        float eps = (float) TrainOptions.ADAM_EPS;
        float step = (float) lr;
        for (Parameters.Tensor tensor : params.list()) {
            float[] w = tensor.data();
            float[] g = grads.get(tensor.name());
            float[] mm = m.get(tensor.name());
            float[] vv = v.get(tensor.name());
            float decay = tensor.isMatrix() ? (float) (lr * weightDecay) : 0f;
            pool.forRange(w.length, 4096, (s, e) -> {
                for (int i = s; i < e; i++) {
                    float gi = g[i] * gradScale;
                    mm[i] = b1 * mm[i] + (1 - b1) * gi;
                    vv[i] = b2 * vv[i] + (1 - b2) * gi * gi;
                    float mHat = mm[i] / c1;
                    float vHat = vv[i] / c2;
                    w[i] -= decay * w[i] + step * mHat / ((float) Math.sqrt(vHat) + eps);
                }
            });
        }
        return norm;
    }
}
