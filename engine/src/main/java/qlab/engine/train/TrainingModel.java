package qlab.engine.train;

import static qlab.engine.tensor.VectorSupport.F;
import static qlab.engine.tensor.VectorSupport.LANES;

import jdk.incubator.vector.FloatVector;

import qlab.engine.model.ModelConfig;
import qlab.engine.model.ModelManifest;
import qlab.engine.tensor.FloatKernels;
import qlab.engine.tensor.VectorSupport;
import qlab.engine.util.WorkerPool;

/**
 * The Qwen2 forward pass with everything the backward pass needs kept, and the backward pass, for
 * a micro-batch of packed sequences: {@code seqs} rows of {@code len + 1} tokens, each predicting
 * tokens 1 .. len from 0 .. len − 1 at positions 0 .. len − 1 (causal attention within the row).
 *
 * <p>The arithmetic is that of the engine's {@link qlab.engine.model.Transformer}: the same
 * RMSNorm, rotate-half RoPE, GQA head mapping and SwiGLU (the products summed in another order:
 * within float rounding of the engine's logits, not bitwise). All products go through
 * {@link BlockedProducts}. Every
 * reduction has a fixed order and every parallel task owns the cells it writes, so the gradients
 * are the same bits for any thread count. Exponentials come from the engine's exp (adds, FMAs and
 * bit operations, the same in compiled and interpreted code); RoPE's angles from StrictMath, whose
 * results are specified to the bit, as are the initial weights, the schedule and AdamW's bias
 * corrections.
 *
 * <p>Not thread-safe: one micro-batch at a time (the activations are kept in fields between the
 * forward and the backward pass).
 */
public final class TrainingModel {

    private final ModelConfig c;
    private final WorkerPool pool;
    private final double[] invFreqD; // [headDim/2]
    private final int hidden;
    private final int qd;
    private final int kvd;
    private final int inter;
    private final int vocab;

    // ---- activations kept for the backward pass, sized for `rows` rows (n = seqs × len)
    private int rows;
    private int seqs;
    private int len;
    private float[][] xIn;  // [layer] (n, hidden): the residual stream entering the layer
    private float[][] r1;   // [layer] (n): 1/rms of xIn
    private float[][] xn1;  // [layer] (n, hidden): attention input, normalised and weighted
    private float[][] q;    // [layer] (n, qDim): queries after bias and RoPE
    private float[][] k;    // [layer] (n, kvDim): keys after bias and RoPE
    private float[][] v;    // [layer] (n, kvDim)
    private float[][] prob; // [layer] (seqs, heads, len, len): attention probabilities, row t uses j <= t
    private float[][] att;  // [layer] (n, qDim): attention output, heads concatenated
    private float[][] xMid; // [layer] (n, hidden): the residual stream after attention
    private float[][] r2;   // [layer] (n)
    private float[][] xn2;  // [layer] (n, hidden): MLP input
    private float[][] gate; // [layer] (n, inter): gate before the activation
    private float[][] up;   // [layer] (n, inter)
    private float[][] act;  // [layer] (n, inter): silu(gate) × up
    private float[] xOut;   // (n, hidden): the residual stream after the last layer
    private float[] rF;     // (n)
    private float[] xnF;    // (n, hidden): head input
    private float[] logits; // (n, vocab): logits, then their gradient
    private float[] cos;    // (len, headDim/2)
    private float[] sin;    // (len, headDim/2)
    private int[] inputs;   // (n)
    private int[] targets;  // (n)

    // ---- gradient scratch: (n, widest of hidden, qDim, inter)
    private float[] dx;     // (n, hidden): gradient of the residual stream
    private float[] dA;     // (n, max(qDim, inter))
    private float[] dB;     // (n, max(qDim, inter))
    private float[] dK;     // (n, kvDim)
    private float[] dV;     // (n, kvDim)
    private float[] dH;     // (n, hidden)
    private float[] dH2;    // (n, hidden)

    private float[] transposed = new float[0]; // a weight transposed for the forward product

    private long productMacs;
    private long productNanos;

    public TrainingModel(ModelConfig config, WorkerPool pool) {
        this.c = config;
        this.pool = pool;
        this.hidden = c.hiddenSize();
        this.qd = c.qDim();
        this.kvd = c.kvDim();
        this.inter = c.intermediateSize();
        this.vocab = c.vocabSize();
        int half = c.headDim() / 2;
        this.invFreqD = new double[half];
        for (int i = 0; i < half; i++) {
            invFreqD[i] = 1.0 / StrictMath.pow(c.ropeTheta(), (2.0 * i) / c.headDim());
        }
    }

    public ModelConfig config() {
        return c;
    }

    /** Multiply-adds done by matrix products so far (forward and backward). */
    public long productMacs() {
        return productMacs;
    }

    /** Wall time spent in matrix products so far, nanoseconds. */
    public long productNanos() {
        return productNanos;
    }

    // ----------------------------------------------------------------------------------------
    // Entry points

    /**
     * Forward and backward of one micro-batch. Adds the gradient of {@code lossScale} × (the sum of
     * the token losses) to {@code grads}.
     *
     * @param tokens (seqs, len + 1) token ids
     * @return the sum of the micro-batch's token losses (nats)
     */
    public double forwardBackward(Parameters p, Parameters grads, int[] tokens, int seqs, int len, float lossScale) {
        forward(p, tokens, seqs, len);
        double loss = crossEntropy(lossScale, true);
        backward(p, grads);
        return loss;
    }

    /** The sum of the token losses of a micro-batch, forward only. */
    public double loss(Parameters p, int[] tokens, int seqs, int len) {
        forward(p, tokens, seqs, len);
        return crossEntropy(0f, false);
    }

    /** Logits (seqs × len, vocab) of the inputs (the first len tokens of each row of {@code tokens}). */
    public float[] logits(Parameters p, int[] tokens, int seqs, int len) {
        forward(p, tokens, seqs, len);
        return java.util.Arrays.copyOf(logits, seqs * len * vocab);
    }

    // ----------------------------------------------------------------------------------------
    // Forward

    private void forward(Parameters p, int[] tokens, int seqs, int len) {
        if (tokens.length != seqs * (len + 1)) {
            throw new IllegalArgumentException(tokens.length + " tokens for " + seqs + " rows of " + (len + 1));
        }
        int n = seqs * len;
        ensure(n, seqs, len);
        for (int s = 0; s < seqs; s++) {
            for (int t = 0; t < len; t++) {
                int tok = tokens[s * (len + 1) + t];
                int next = tokens[s * (len + 1) + t + 1];
                if (tok < 0 || tok >= vocab || next < 0 || next >= vocab) {
                    throw new IllegalArgumentException("token id outside [0, " + vocab + ")");
                }
                inputs[s * len + t] = tok;
                targets[s * len + t] = next;
            }
        }
        ropeTables(len);

        // x = embed_tokens[inputs]
        float[] embed = p.get(ModelManifest.EMBED);
        float[] x = xIn[0];
        for (int t = 0; t < n; t++) {
            System.arraycopy(embed, inputs[t] * hidden, x, t * hidden, hidden);
        }
        for (int l = 0; l < c.numLayers(); l++) {
            // ---- attention block
            rmsnorm(xIn[l], p.layer(l, "input_layernorm.weight"), xn1[l], r1[l], n);
            project(p.layer(l, "self_attn.q_proj.weight"), qd, xn1[l], n, q[l]);
            project(p.layer(l, "self_attn.k_proj.weight"), kvd, xn1[l], n, k[l]);
            project(p.layer(l, "self_attn.v_proj.weight"), kvd, xn1[l], n, v[l]);
            addBias(q[l], p.layer(l, "self_attn.q_proj.bias"), n);
            addBias(k[l], p.layer(l, "self_attn.k_proj.bias"), n);
            addBias(v[l], p.layer(l, "self_attn.v_proj.bias"), n);
            rope(q[l], c.numHeads(), n, false);
            rope(k[l], c.numKvHeads(), n, false);
            attention(l);
            project(p.layer(l, "self_attn.o_proj.weight"), hidden, att[l], n, xMid[l]);
            add(xMid[l], xIn[l], n * hidden);

            // ---- MLP block
            rmsnorm(xMid[l], p.layer(l, "post_attention_layernorm.weight"), xn2[l], r2[l], n);
            project(p.layer(l, "mlp.gate_proj.weight"), inter, xn2[l], n, gate[l]);
            project(p.layer(l, "mlp.up_proj.weight"), inter, xn2[l], n, up[l]);
            siluMul(gate[l], up[l], act[l], n * inter);
            float[] next = l + 1 < c.numLayers() ? xIn[l + 1] : xOut;
            project(p.layer(l, "mlp.down_proj.weight"), hidden, act[l], n, next);
            add(next, xMid[l], n * hidden);
        }
        // ---- final norm and LM head
        rmsnorm(xOut, p.get(ModelManifest.FINAL_NORM), xnF, rF, n);
        project(p.head(), vocab, xnF, n, logits);
    }

    /** out (n, rows) = in (n, cols) Wᵀ: W transposed into scratch, then the blocked product. */
    private void project(float[] w, int rows, float[] in, int n, float[] out) {
        long t0 = System.nanoTime();
        int cols = w.length / rows;
        if (transposed.length < w.length) {
            transposed = new float[w.length];
        }
        BlockedProducts.transpose(w, rows, cols, transposed, pool);
        BlockedProducts.forward(in, transposed, out, n, cols, rows, pool);
        productNanos += System.nanoTime() - t0;
        productMacs += (long) n * rows * cols;
    }

    /** Causal attention of every (sequence, head) over its own sequence. */
    private void attention(int l) {
        int heads = c.numHeads();
        int hd = c.headDim();
        int group = c.groupSize();
        float scale = (float) (1.0 / Math.sqrt(hd));
        float[] ql = q[l];
        float[] kl = k[l];
        float[] vl = v[l];
        float[] pl = prob[l];
        float[] al = att[l];
        pool.forRange(seqs * heads, 1, (from, to) -> {
            float[] kT = new float[hd * len]; // this task's keys, transposed
            for (int task = from; task < to; task++) {
                int s = task / heads;
                int h = task % heads;
                int kvh = h / group;
                int kBase = s * len * kvd + kvh * hd;
                AttentionKernels.transpose(kl, kBase, kvd, len, hd, kT);
                for (int t = 0; t < len; t++) {
                    int row = s * len + t;
                    int po = (task * len + t) * len;
                    int qo = row * qd + h * hd;
                    AttentionKernels.columnDots(ql, qo, kT, len, hd, wholeVectors(t + 1, len), pl, po);
                    float max = Float.NEGATIVE_INFINITY;
                    for (int j = 0; j <= t; j++) {
                        float sc = pl[po + j] * scale;
                        pl[po + j] = sc;
                        max = Math.max(max, sc);
                    }
                    float inv = 1f / expShifted(pl, po, t + 1, max);
                    scale(pl, po, t + 1, inv);
                    FloatKernels.weightedRows(pl, po, t + 1, 1f, vl, kBase, kvd, al, qo, hd);
                }
            }
        });
    }

    /**
     * Token losses −log softmax(logits)[target], summed in row order. The logits are overwritten:
     * with {@code gradient}, by their gradient lossScale × (softmax − one-hot).
     */
    private double crossEntropy(float lossScale, boolean gradient) {
        int n = rows;
        double[] perRow = new double[n];
        pool.forRange(n, 1, (from, to) -> {
            for (int t = from; t < to; t++) {
                int o = t * vocab;
                float max = Float.NEGATIVE_INFINITY;
                for (int j = 0; j < vocab; j++) {
                    max = Math.max(max, logits[o + j]);
                }
                float target = logits[o + targets[t]];
                float sum = expShifted(logits, o, vocab, max);
                perRow[t] = Math.log(sum) + max - target;
                if (gradient) {
                    scale(logits, o, vocab, lossScale / sum);
                    logits[o + targets[t]] -= lossScale;
                }
            }
        });
        double total = 0;
        for (double d : perRow) {
            total += d;
        }
        return total;
    }

    // ----------------------------------------------------------------------------------------
    // Backward

    private void backward(Parameters p, Parameters g) {
        int n = rows;
        // ---- LM head and final norm: dxnF = dlogits · head, dHead += dlogitsᵀ · xnF
        dX(logits, p.head(), dH, n, vocab, hidden);
        dW(logits, xnF, g.head(), n, vocab, hidden);
        java.util.Arrays.fill(dx, 0, n * hidden, 0f);
        rmsnormBackward(xOut, p.get(ModelManifest.FINAL_NORM), rF, dH, dx, g.get(ModelManifest.FINAL_NORM), n);

        for (int l = c.numLayers() - 1; l >= 0; l--) {
            // ---- MLP block: x_next = xMid + act · downᵀ
            dX(dx, p.layer(l, "mlp.down_proj.weight"), dA, n, hidden, inter);        // dAct (n, inter)
            dW(dx, act[l], g.layer(l, "mlp.down_proj.weight"), n, hidden, inter);
            siluMulBackward(gate[l], up[l], dA, dB, n * inter);                       // dA := dGate, dB := dUp
            dX(dA, p.layer(l, "mlp.gate_proj.weight"), dH, n, inter, hidden);
            dX(dB, p.layer(l, "mlp.up_proj.weight"), dH2, n, inter, hidden);
            add(dH, dH2, n * hidden);                                                 // dxn2
            dW(dA, xn2[l], g.layer(l, "mlp.gate_proj.weight"), n, inter, hidden);
            dW(dB, xn2[l], g.layer(l, "mlp.up_proj.weight"), n, inter, hidden);
            rmsnormBackward(xMid[l], p.layer(l, "post_attention_layernorm.weight"), r2[l], dH, dx,
                    g.layer(l, "post_attention_layernorm.weight"), n);

            // ---- attention block: xMid = xIn + att · oᵀ
            dX(dx, p.layer(l, "self_attn.o_proj.weight"), dB, n, hidden, qd);          // dAtt (n, qDim)
            dW(dx, att[l], g.layer(l, "self_attn.o_proj.weight"), n, hidden, qd);
            attentionBackward(l, dB, dA);                                              // dA := dq, dK, dV
            rope(dA, c.numHeads(), n, true);
            rope(dK, c.numKvHeads(), n, true);
            biasBackward(dA, g.layer(l, "self_attn.q_proj.bias"), n);
            biasBackward(dK, g.layer(l, "self_attn.k_proj.bias"), n);
            biasBackward(dV, g.layer(l, "self_attn.v_proj.bias"), n);
            dX(dA, p.layer(l, "self_attn.q_proj.weight"), dH, n, qd, hidden);
            dX(dK, p.layer(l, "self_attn.k_proj.weight"), dH2, n, kvd, hidden);
            add(dH, dH2, n * hidden);
            dX(dV, p.layer(l, "self_attn.v_proj.weight"), dH2, n, kvd, hidden);
            add(dH, dH2, n * hidden);                                                 // dxn1
            dW(dA, xn1[l], g.layer(l, "self_attn.q_proj.weight"), n, qd, hidden);
            dW(dK, xn1[l], g.layer(l, "self_attn.k_proj.weight"), n, kvd, hidden);
            dW(dV, xn1[l], g.layer(l, "self_attn.v_proj.weight"), n, kvd, hidden);
            rmsnormBackward(xIn[l], p.layer(l, "input_layernorm.weight"), r1[l], dH, dx,
                    g.layer(l, "input_layernorm.weight"), n);
        }
        // ---- embedding: each row's gradient into its token's row, in row order
        float[] dEmbed = g.get(ModelManifest.EMBED);
        for (int t = 0; t < n; t++) {
            FloatKernels.axpy(1f, dx, t * hidden, dEmbed, inputs[t] * hidden, hidden);
        }
    }

    private void dX(float[] dy, float[] w, float[] out, int n, int outDim, int inDim) {
        long t0 = System.nanoTime();
        BlockedProducts.dX(dy, w, out, n, outDim, inDim, pool);
        productNanos += System.nanoTime() - t0;
        productMacs += (long) n * outDim * inDim;
    }

    private void dW(float[] dy, float[] x, float[] dw, int n, int outDim, int inDim) {
        long t0 = System.nanoTime();
        BlockedProducts.dW(dy, x, dw, n, outDim, inDim, pool);
        productNanos += System.nanoTime() - t0;
        productMacs += (long) n * outDim * inDim;
    }

    /**
     * Attention's backward pass for layer l, given dAtt (n, qDim): dq (n, qDim) into {@code dq}, dk
     * and dv (n, kvDim) into the fields. One task per (sequence, KV head) owns that KV head's dk and
     * dv rows and the dq of the query heads it serves, so nothing is shared between tasks.
     *
     * <p>Per query head, dS = P ⊙ (dP − rowsum(P ⊙ dP)) with dP = dO Vᵀ is formed whole and kept
     * transposed beside Pᵀ, so that dk_j = scale Σ_t dS[t, j] q_t and dv_j = Σ_t P[t, j] dO_t are each
     * one weighted sum of rows with the sums in registers ({@link AttentionKernels}), not
     * one axpy per (t, j) through memory.
     */
    private void attentionBackward(int l, float[] dAtt, float[] dq) {
        int heads = c.numHeads();
        int kvHeads = c.numKvHeads();
        int hd = c.headDim();
        int group = c.groupSize();
        float scale = (float) (1.0 / Math.sqrt(hd));
        float[] ql = q[l];
        float[] kl = k[l];
        float[] vl = v[l];
        float[] pl = prob[l];
        pool.forRange(seqs * kvHeads, 1, (from, to) -> {
            float[] ds = new float[len];
            float[] dsT = new float[len * len]; // dsT[j * len + t] = dS[t, j], t >= j
            float[] pT = new float[len * len];  // pT[j * len + t] = P[t, j], t >= j
            float[] sum = new float[hd];
            float[] vT = new float[hd * len]; // this task's values, transposed
            for (int task = from; task < to; task++) {
                int s = task / kvHeads;
                int kvh = task % kvHeads;
                int kBase = s * len * kvd + kvh * hd;
                AttentionKernels.transpose(vl, kBase, kvd, len, hd, vT);
                for (int t = 0; t < len; t++) {
                    java.util.Arrays.fill(dK, kBase + t * kvd, kBase + t * kvd + hd, 0f);
                    java.util.Arrays.fill(dV, kBase + t * kvd, kBase + t * kvd + hd, 0f);
                }
                for (int h = kvh * group; h < (kvh + 1) * group; h++) {
                    int qBase = s * len * qd + h * hd;
                    for (int t = 0; t < len; t++) {
                        int qo = qBase + t * qd;
                        int po = ((s * heads + h) * len + t) * len;
                        // dP_j = dO · v_j; dS_j = P_j (dP_j − Σ_i P_i dP_i)
                        AttentionKernels.columnDots(dAtt, qo, vT, len, hd, wholeVectors(t + 1, len), ds, 0);
                        float dot = 0;
                        for (int j = 0; j <= t; j++) {
                            dot += pl[po + j] * ds[j];
                        }
                        for (int j = 0; j <= t; j++) {
                            ds[j] = pl[po + j] * (ds[j] - dot);
                            dsT[j * len + t] = ds[j];
                            pT[j * len + t] = pl[po + j];
                        }
                        // dq = scale Σ_j dS_j k_j
                        FloatKernels.weightedRows(ds, 0, t + 1, scale, kl, kBase, kvd, dq, qo, hd);
                    }
                    // dk_j += scale Σ_{t>=j} dS[t, j] q_t;  dv_j += Σ_{t>=j} P[t, j] dO_t
                    for (int j = 0; j < len; j++) {
                        int rows = len - j;
                        int at = kBase + j * kvd;
                        FloatKernels.weightedRows(dsT, j * len + j, rows, scale, ql, qBase + j * qd, qd, sum, 0, hd);
                        FloatKernels.axpy(1f, sum, 0, dK, at, hd);
                        FloatKernels.weightedRows(pT, j * len + j, rows, 1f, dAtt, qBase + j * qd, qd, sum, 0, hd);
                        FloatKernels.axpy(1f, sum, 0, dV, at, hd);
                    }
                }
            }
        });
    }

    // ----------------------------------------------------------------------------------------
    // Element-wise pieces

    /** out = weight ⊙ x / rms(x), row by row, as the engine's forward computes it; r keeps 1/rms. */
    private void rmsnorm(float[] in, float[] weight, float[] out, float[] r, int n) {
        float eps = (float) c.rmsNormEps();
        pool.forRange(n, 1, (from, to) -> {
            for (int t = from; t < to; t++) {
                int o = t * hidden;
                float ss = FloatKernels.dot(in, o, in, o, hidden);
                float rr = (float) (1.0 / Math.sqrt(ss / hidden + eps));
                r[t] = rr;
                for (int i = 0; i < hidden; i++) {
                    out[o + i] = weight[i] * (in[o + i] * rr);
                }
            }
        });
    }

    /**
     * Given dy = dL/d(rmsnorm(x)), adds dL/dx to dx and dL/dweight to dWeight:
     * dx_i += r (w_i dy_i) − x_i r³/h Σ_j w_j dy_j x_j;  dWeight_i += Σ_t dy_i x_i r.
     */
    private void rmsnormBackward(float[] x, float[] weight, float[] r, float[] dy, float[] dx, float[] dWeight, int n) {
        pool.forRange(n, 1, (from, to) -> {
            for (int t = from; t < to; t++) {
                int o = t * hidden;
                float rr = r[t];
                double dot = 0;
                for (int i = 0; i < hidden; i++) {
                    dot += (double) weight[i] * dy[o + i] * x[o + i];
                }
                float coef = (float) (dot * rr * rr * rr / hidden);
                for (int i = 0; i < hidden; i++) {
                    dx[o + i] += rr * (weight[i] * dy[o + i]) - x[o + i] * coef;
                }
            }
        });
        for (int t = 0; t < n; t++) {
            int o = t * hidden;
            float rr = r[t];
            for (int i = 0; i < hidden; i++) {
                dWeight[i] += dy[o + i] * (x[o + i] * rr);
            }
        }
    }

    private void addBias(float[] a, float[] bias, int n) {
        int w = bias.length;
        for (int t = 0; t < n; t++) {
            for (int i = 0; i < w; i++) {
                a[t * w + i] += bias[i];
            }
        }
    }

    /** dBias += Σ_t dy[t, :], rows in order. */
    private static void biasBackward(float[] dy, float[] dBias, int n) {
        int w = dBias.length;
        for (int t = 0; t < n; t++) {
            FloatKernels.axpy(1f, dy, t * w, dBias, 0, w);
        }
    }

    private static void add(float[] a, float[] b, int n) {
        for (int i = 0; i < n; i++) {
            a[i] += b[i];
        }
    }

    private void ropeTables(int len) {
        int half = c.headDim() / 2;
        for (int t = 0; t < len; t++) {
            for (int i = 0; i < half; i++) {
                double angle = t * invFreqD[i];
                cos[t * half + i] = (float) StrictMath.cos(angle);
                sin[t * half + i] = (float) StrictMath.sin(angle);
            }
        }
    }

    /**
     * Rotate-half RoPE on every row (position = row mod len): pairs (i, i + d/2) rotate by the
     * position's angle; {@code inverse} rotates back (the transpose), which is the backward pass.
     */
    private void rope(float[] a, int nHeads, int n, boolean inverse) {
        pool.forRange(n, 16, (from, to) -> ropeRows(a, nHeads, inverse ? -1f : 1f, from, to));
    }

    private void ropeRows(float[] a, int nHeads, float sign, int from, int to) {
        int hd = c.headDim();
        int half = hd / 2;
        int width = nHeads * hd;
        for (int row = from; row < to; row++) {
            int table = (row % len) * half;
            for (int h = 0; h < nHeads; h++) {
                int b = row * width + h * hd;
                for (int i = 0; i < half; i++) {
                    float x1 = a[b + i];
                    float x2 = a[b + i + half];
                    float cs = cos[table + i];
                    float sn = sign * sin[table + i];
                    a[b + i] = x1 * cs - x2 * sn;
                    a[b + i + half] = x2 * cs + x1 * sn;
                }
            }
        }
    }

    /**
     * count rounded up to whole vectors, at most len: scores past a row's causal end are computed
     * along (they are never read) so that no key of the row falls to the scalar tail.
     */
    private static int wholeVectors(int count, int len) {
        return Math.min(len, (count + LANES - 1) / LANES * LANES);
    }

    /** a[off + j] = e^(a[off + j] − max) for j < len; returns their sum (lanes, folded in a fixed order, then the tail). */
    private static float expShifted(float[] a, int off, int len, float max) {
        float sum = 0;
        int j = 0;
        if (VectorSupport.ENABLED) {
            FloatVector m = FloatVector.broadcast(F, max);
            FloatVector acc = FloatVector.zero(F);
            for (; j + LANES <= len; j += LANES) {
                FloatVector e = VectorSupport.exp(FloatVector.fromArray(F, a, off + j).sub(m));
                e.intoArray(a, off + j);
                acc = acc.add(e);
            }
            sum = VectorSupport.sum(acc);
        }
        for (; j < len; j++) {
            float e = VectorSupport.exp(a[off + j] - max);
            a[off + j] = e;
            sum += e;
        }
        return sum;
    }

    /** a[off + j] *= factor for j < len. */
    private static void scale(float[] a, int off, int len, float factor) {
        int j = 0;
        if (VectorSupport.ENABLED) {
            for (; j + LANES <= len; j += LANES) {
                FloatVector.fromArray(F, a, off + j).mul(factor).intoArray(a, off + j);
            }
        }
        for (; j < len; j++) {
            a[off + j] *= factor;
        }
    }

    /** out = silu(g) × u = g / (1 + e^−g) × u, with the engine's exp (vector and scalar give the same bits). */
    private void siluMul(float[] g, float[] u, float[] out, int n) {
        pool.forRange(n, 1024, (from, to) -> {
            int i = from;
            if (VectorSupport.ENABLED) {
                for (; i + LANES <= to; i += LANES) {
                    FloatVector gv = FloatVector.fromArray(F, g, i);
                    FloatVector sig = VectorSupport.exp(gv.neg()).add(1f);
                    gv.div(sig).mul(FloatVector.fromArray(F, u, i)).intoArray(out, i);
                }
            }
            for (; i < to; i++) {
                float gi = g[i];
                out[i] = gi / (1f + VectorSupport.exp(-gi)) * u[i];
            }
        });
    }

    /** Given dOut in dg's place: dg := dOut u σ(g)(1 + g(1 − σ(g))), du := dOut silu(g). */
    private void siluMulBackward(float[] g, float[] u, float[] dg, float[] du, int n) {
        pool.forRange(n, 1024, (from, to) -> {
            int i = from;
            if (VectorSupport.ENABLED) {
                FloatVector one = FloatVector.broadcast(F, 1f);
                for (; i + LANES <= to; i += LANES) {
                    FloatVector gv = FloatVector.fromArray(F, g, i);
                    FloatVector sig = one.div(VectorSupport.exp(gv.neg()).add(1f));
                    FloatVector d = FloatVector.fromArray(F, dg, i);
                    d.mul(gv).mul(sig).intoArray(du, i);
                    d.mul(FloatVector.fromArray(F, u, i)).mul(sig).mul(gv.mul(one.sub(sig)).add(1f)).intoArray(dg, i);
                }
            }
            for (; i < to; i++) {
                float gi = g[i];
                float sig = 1f / (1f + VectorSupport.exp(-gi));
                float d = dg[i];
                du[i] = d * gi * sig;
                dg[i] = d * u[i] * sig * (1f + gi * (1f - sig));
            }
        });
    }

    private void ensure(int n, int seqs, int len) {
        if (n == rows && seqs == this.seqs && len == this.len) {
            return;
        }
        this.seqs = seqs;
        this.len = len;
        int layers = c.numLayers();
        rows = n;
        xIn = new float[layers][n * hidden];
        r1 = new float[layers][n];
        xn1 = new float[layers][n * hidden];
        q = new float[layers][n * qd];
        k = new float[layers][n * kvd];
        v = new float[layers][n * kvd];
        prob = new float[layers][seqs * c.numHeads() * len * len];
        att = new float[layers][n * qd];
        xMid = new float[layers][n * hidden];
        r2 = new float[layers][n];
        xn2 = new float[layers][n * hidden];
        gate = new float[layers][n * inter];
        up = new float[layers][n * inter];
        act = new float[layers][n * inter];
        xOut = new float[n * hidden];
        rF = new float[n];
        xnF = new float[n * hidden];
        logits = new float[Math.multiplyExact(n, vocab)];
        cos = new float[len * (c.headDim() / 2)];
        sin = new float[len * (c.headDim() / 2)];
        inputs = new int[n];
        targets = new int[n];
        int wide = Math.max(qd, inter);
        dx = new float[n * hidden];
        dA = new float[n * wide];
        dB = new float[n * wide];
        dK = new float[n * kvd];
        dV = new float[n * kvd];
        dH = new float[n * hidden];
        dH2 = new float[n * hidden];
    }
}
