package qlab.engine.model;

import qlab.engine.tensor.Matrix;

/**
 * The readable specification of the forward pass of every supported family (Qwen2, Llama,
 * Qwen3: biases, q/k norms and RoPE scaling as {@link ModelConfig} describes them): plain loops in float64, the whole
 * sequence recomputed from scratch (no KV cache), no threads, no vectors, no fusion. It is slow
 * and exists to be obviously right; the fast {@link Transformer} is tested against it.
 *
 * <p>Weights are read through {@link Matrix#copyRow}, so a quantized model's reference is the
 * exact arithmetic on its dequantized weights.
 */
public final class ReferenceModel {

    /**
     * Deliberately wrong conventions, each a classic silent attention bug. They exist so tests can
     * show that the goldens tell each of them apart from the right arithmetic.
     */
    public enum Variant {
        /** The real arithmetic (named after the first family it was written for). */
        QWEN2,
        /** RoPE rotating adjacent pairs (2i, 2i+1) instead of halves (i, i + d/2). */
        INTERLEAVED_ROPE,
        /** KV heads tiled (query head j uses KV head j mod m) instead of repeated (j / g). */
        TILED_KV_HEADS,
        /** A causal mask that excludes the diagonal (a token does not attend to itself). */
        MASK_WITHOUT_DIAGONAL
    }

    private final ModelConfig c;
    private final Weights w;
    private final Variant variant;
    private final double[] invFreq; // [headDim/2], float64, scaled as the config says
    private final KvTypes kvTypes;

    public ReferenceModel(Model model) {
        this(model, Variant.QWEN2);
    }

    public ReferenceModel(Model model, Variant variant) {
        this(model, variant, KvTypes.F32);
    }

    /**
     * With keys and values rounded as a cache of these types stores them (through float, each KV
     * head's row encoded and decoded); f32 keeps them in float64.
     */
    public ReferenceModel(Model model, KvTypes kvTypes) {
        this(model, Variant.QWEN2, kvTypes);
    }

    private ReferenceModel(Model model, Variant variant, KvTypes kvTypes) {
        this.c = model.config();
        this.w = model.weights();
        this.variant = variant;
        this.invFreq = c.ropeInverseFrequencies();
        this.kvTypes = kvTypes;
    }

    /** logits [T][vocab] for every position of {@code tokens}, positions starting at 0. */
    public double[][] logits(int[] tokens) {
        int n = tokens.length;
        int hidden = c.hiddenSize();
        int hd = c.headDim();

        // x: (n, hidden)
        double[][] x = new double[n][];
        for (int t = 0; t < n; t++) {
            x[t] = row(w.embed(), tokens[t]);
        }
        for (LayerWeights L : w.layers()) {
            // ---- attention
            double[][] h = new double[n][];
            for (int t = 0; t < n; t++) {
                h[t] = rmsnorm(x[t], L.attnNorm());
            }
            double[][] q = new double[n][];
            double[][] k = new double[n][];
            double[][] v = new double[n][];
            for (int t = 0; t < n; t++) {
                q[t] = linear(L.q(), h[t], L.qBias());
                k[t] = linear(L.k(), h[t], L.kBias());
                v[t] = linear(L.v(), h[t], L.vBias());
                if (c.qkNorm()) {
                    headNorm(q[t], c.numHeads(), L.qNorm());
                    headNorm(k[t], c.numKvHeads(), L.kNorm());
                }
                rope(q[t], c.numHeads(), t);
                rope(k[t], c.numKvHeads(), t);
                roundPerHead(k[t], c.numKvHeads(), kvTypes.keys(), false);
                roundPerHead(v[t], c.numKvHeads(), kvTypes.values(), false);
                roundPerHead(q[t], c.numHeads(), kvTypes.keys(), true);
            }
            for (int t = 0; t < n; t++) {
                double[] att = new double[c.qDim()];
                for (int head = 0; head < c.numHeads(); head++) {
                    int kvh = variant == Variant.TILED_KV_HEADS ? head % c.numKvHeads() : head / c.groupSize();
                    int visible = variant == Variant.MASK_WITHOUT_DIAGONAL ? t : t + 1;
                    // scores over positions 0..t (a token attends to itself and everything before)
                    double[] scores = new double[visible];
                    double max = Double.NEGATIVE_INFINITY;
                    for (int j = 0; j < visible; j++) {
                        double s = 0;
                        for (int i = 0; i < hd; i++) {
                            s += q[t][head * hd + i] * k[j][kvh * hd + i];
                        }
                        scores[j] = s / Math.sqrt(hd);
                        max = Math.max(max, scores[j]);
                    }
                    double sum = 0;
                    for (int j = 0; j < visible; j++) {
                        scores[j] = Math.exp(scores[j] - max);
                        sum += scores[j];
                    }
                    for (int j = 0; j < visible; j++) {
                        for (int i = 0; i < hd; i++) {
                            att[head * hd + i] += scores[j] / sum * v[j][kvh * hd + i];
                        }
                    }
                }
                double[] o = linear(L.o(), att, L.oBias());
                for (int i = 0; i < hidden; i++) {
                    x[t][i] += o[i];
                }
            }
            // ---- MLP
            for (int t = 0; t < n; t++) {
                double[] h2 = rmsnorm(x[t], L.mlpNorm());
                double[] g = linear(L.gate(), h2, L.gateBias());
                double[] u = linear(L.up(), h2, L.upBias());
                for (int i = 0; i < g.length; i++) {
                    g[i] = g[i] / (1 + Math.exp(-g[i])) * u[i];
                }
                double[] d = linear(L.down(), g, L.downBias());
                for (int i = 0; i < hidden; i++) {
                    x[t][i] += d[i];
                }
            }
        }
        double[][] logits = new double[n][];
        for (int t = 0; t < n; t++) {
            logits[t] = linear(w.lmHead(), rmsnorm(x[t], w.finalNorm()), null);
        }
        return logits;
    }

    /**
     * Rounds each head's slice of a row through float as the cache stores keys or values of this
     * type ({@link KvType#round}), or, for a query, as the dot product with such keys takes it
     * ({@link KvType#roundQuery}); f32 keeps the row in float64.
     */
    private void roundPerHead(double[] row, int heads, KvType type, boolean query) {
        if (type == KvType.F32) {
            return;
        }
        float[] f = new float[row.length];
        for (int i = 0; i < row.length; i++) {
            f[i] = (float) row[i];
        }
        for (int h = 0; h < heads; h++) {
            if (query) {
                type.roundQuery(f, h * c.headDim(), c.headDim());
            } else {
                type.round(f, h * c.headDim(), c.headDim());
            }
        }
        for (int i = 0; i < row.length; i++) {
            row[i] = f[i];
        }
    }

    /** Greedy continuation: argmax (lowest index on ties) of the last position, appended, repeated. */
    public int[] greedy(int[] prompt, int newTokens) {
        int[] seq = java.util.Arrays.copyOf(prompt, prompt.length + newTokens);
        for (int i = 0; i < newTokens; i++) {
            double[][] l = logits(java.util.Arrays.copyOf(seq, prompt.length + i));
            seq[prompt.length + i] = argmax(l[l.length - 1]);
        }
        return java.util.Arrays.copyOfRange(seq, prompt.length, seq.length);
    }

    public static int argmax(double[] a) {
        int best = 0;
        for (int i = 1; i < a.length; i++) {
            if (a[i] > a[best]) {
                best = i;
            }
        }
        return best;
    }

    private double[] rmsnorm(double[] in, float[] weight) {
        double ss = 0;
        for (double d : in) {
            ss += d * d;
        }
        double r = 1.0 / Math.sqrt(ss / in.length + c.rmsNormEps());
        double[] out = new double[in.length];
        for (int i = 0; i < in.length; i++) {
            out[i] = weight[i] * (in[i] * r);
        }
        return out;
    }

    /** Each of nHeads head vectors of a, RMS-normalised over its headDim entries (Qwen3's q_norm/k_norm). */
    private void headNorm(double[] a, int nHeads, float[] weight) {
        int hd = c.headDim();
        for (int h = 0; h < nHeads; h++) {
            double[] head = rmsnorm(java.util.Arrays.copyOfRange(a, h * hd, (h + 1) * hd), weight);
            System.arraycopy(head, 0, a, h * hd, hd);
        }
    }

    /** y = W x + b, W [out, in]. */
    private static double[] linear(Matrix m, double[] in, float[] bias) {
        double[] y = new double[m.rows()];
        float[] wr = new float[m.cols()];
        for (int r = 0; r < m.rows(); r++) {
            m.copyRow(r, wr, 0);
            double s = 0;
            for (int i = 0; i < wr.length; i++) {
                s += wr[i] * in[i];
            }
            y[r] = s + (bias == null ? 0 : bias[r]);
        }
        return y;
    }

    private static double[] row(Matrix m, int r) {
        float[] f = new float[m.cols()];
        m.copyRow(r, f, 0);
        double[] d = new double[f.length];
        for (int i = 0; i < f.length; i++) {
            d[i] = f[i];
        }
        return d;
    }

    /** rotate_half RoPE at position pos: (z1, z2) -> (z1 cos - z2 sin, z2 cos + z1 sin), halves not pairs. */
    private void rope(double[] a, int nHeads, int pos) {
        int hd = c.headDim();
        int half = hd / 2;
        if (variant == Variant.INTERLEAVED_ROPE) {
            for (int h = 0; h < nHeads; h++) {
                for (int i = 0; i < half; i++) {
                    double angle = pos * invFreq[i];
                    double x1 = a[h * hd + 2 * i];
                    double x2 = a[h * hd + 2 * i + 1];
                    a[h * hd + 2 * i] = x1 * Math.cos(angle) - x2 * Math.sin(angle);
                    a[h * hd + 2 * i + 1] = x2 * Math.cos(angle) + x1 * Math.sin(angle);
                }
            }
            return;
        }
        for (int h = 0; h < nHeads; h++) {
            for (int i = 0; i < half; i++) {
                double angle = pos * invFreq[i];
                double x1 = a[h * hd + i];
                double x2 = a[h * hd + i + half];
                a[h * hd + i] = x1 * Math.cos(angle) - x2 * Math.sin(angle);
                a[h * hd + i + half] = x2 * Math.cos(angle) + x1 * Math.sin(angle);
            }
        }
    }
}
