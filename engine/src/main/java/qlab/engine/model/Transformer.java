package qlab.engine.model;

import static qlab.engine.tensor.VectorSupport.F;
import static qlab.engine.tensor.VectorSupport.LANES;

import jdk.incubator.vector.FloatVector;
import qlab.engine.QlabException;
import qlab.engine.tensor.FloatKernels;
import qlab.engine.tensor.Matrix;
import qlab.engine.tensor.VectorSupport;
import qlab.engine.util.WorkerPool;

/**
 * The fast forward pass of every supported family (Qwen2, Llama, Qwen3; what differs between
 * them is data in {@link ModelConfig}): matrix products on the worker pool, q/k/v and gate/up fused into
 * one dispatch each (they share their input), Vector API kernels.
 *
 * <p>One call processes a batch of rows; each row is one token of some sequence at some
 * position, with that sequence's KV cache. A prompt prefill is many rows of one cache at
 * consecutive positions; a batched decode step is one row for each of B caches. Either way every
 * weight matrix is read once per call. The reference implementation ({@link ReferenceModel}) is
 * the specification this must agree with.
 *
 * <p>Not thread-safe: one forward at a time per instance (the scratch buffers are reused).
 */
public final class Transformer implements LanguageModel {

    private final ModelConfig c;
    private final Weights w;
    private final WorkerPool pool;
    private final double[] invFreq; // [headDim/2]
    private final KvTypes kvTypes;
    private final int kvTile;
    private final ThreadLocal<AttentionScratch> attentionScratch;
    private ActivationObserver observer;

    // Scratch, sized for `rowsCap` rows; grown on demand.
    private int rowsCap;
    private float[] x;    // residual stream (rows, hidden)
    private float[] xb;   // normalised input of a block (rows, hidden)
    private float[] q;    // (rows, heads*headDim)
    private float[] k;    // (rows, kvHeads*headDim)
    private float[] v;    // (rows, kvHeads*headDim)
    private float[] att;  // attention output, heads concatenated (rows, heads*headDim)
    private float[] tmp;  // projection output before the residual add (rows, hidden)
    private float[] gate; // (rows, intermediate), becomes silu(gate) * up
    private float[] up;   // (rows, intermediate)
    private float[] cos;  // (rows, headDim/2)
    private float[] sin;  // (rows, headDim/2)
    /** Whether the rows of this forward pass are one sequence's consecutive tokens (see {@link Matrix#prepare(float[], int, boolean)}). */
    private boolean prompt;

    /**
     * Positions per KV tile of attention. A row whose context fits one tile gets the plain softmax;
     * longer contexts go tile by tile with a running maximum and sum (the online softmax), so no
     * score row longer than a tile exists and an encoded cache is decoded one tile at a time.
     */
    public static final int DEFAULT_KV_TILE = 512;
    /**
     * Prompt rows per forward pass in {@link #prefill}: the scratch buffers grow with the rows of
     * one pass (intermediate-size floats per row), so a long prompt's memory is its KV cache.
     */
    public static final int DEFAULT_PREFILL_CHUNK = 512;
    /** Rows of one sequence that share each decoded KV tile in a prompt's attention. */
    static final int QUERY_TILE = 64;

    public Transformer(Model model, WorkerPool pool) {
        this(model, pool, KvTypes.F32);
    }

    public Transformer(Model model, WorkerPool pool, KvTypes kvTypes) {
        this(model, pool, kvTypes, DEFAULT_KV_TILE);
    }

    /** With a KV tile of {@code kvTile} positions (tests use small ones to cross many tiles). */
    public Transformer(Model model, WorkerPool pool, KvTypes kvTypes, int kvTile) {
        if (kvTile < 1) {
            throw new IllegalArgumentException("kvTile " + kvTile);
        }
        this.c = model.config();
        this.w = model.weights();
        this.pool = pool;
        this.invFreq = c.ropeInverseFrequencies();
        this.kvTypes = kvTypes;
        this.kvTile = kvTile;
        this.attentionScratch = ThreadLocal.withInitial(() -> new AttentionScratch(c, kvTile));
    }

    @Override
    public ModelConfig config() {
        return c;
    }

    /** Installs (or, with null, removes) an observer of every matrix input. */
    public void observe(ActivationObserver observer) {
        this.observer = observer;
    }

    public WorkerPool pool() {
        return pool;
    }

    /** The cache's storage types of every cache this model makes. */
    public KvTypes kvTypes() {
        return kvTypes;
    }

    @Override
    public KvCache newCache(int capacity) {
        return new KvCache(c, capacity, kvTypes);
    }

    // ----------------------------------------------------------------------------------------
    // Public entry points

    /**
     * Runs {@code tokens} through the model as the continuation of {@code cache} (positions
     * cache.length() ..), in one batched pass, and advances the cache.
     *
     * @return logits [tokens.length, vocab] when allLogits, else the last position's [vocab]
     */
    public float[] forward(int[] tokens, KvCache cache, boolean allLogits) {
        return forward(tokens, cache, allLogits ? 0 : tokens.length - 1);
    }

    /**
     * As {@link #forward(int[], KvCache, boolean)}, computing logits only for rows
     * firstLogitRow .. tokens.length-1 (the LM head is the largest matrix; scoring that needs
     * only some positions skips the rest).
     *
     * @return logits [tokens.length - firstLogitRow, vocab]
     */
    @Override
    public float[] forward(int[] tokens, KvCache cache, int firstLogitRow) {
        int n = tokens.length;
        if (n == 0) {
            throw new IllegalArgumentException("no tokens");
        }
        if (firstLogitRow < 0 || firstLogitRow >= n) {
            throw new IllegalArgumentException("firstLogitRow " + firstLogitRow + " for " + n + " tokens");
        }
        KvCache[] caches = new KvCache[n];
        int[] pos = new int[n];
        for (int t = 0; t < n; t++) {
            caches[t] = cache;
            pos[t] = cache.length() + t;
        }
        int[] logitRows = new int[n - firstLogitRow];
        for (int i = 0; i < logitRows.length; i++) {
            logitRows[i] = firstLogitRow + i;
        }
        float[] logits = run(tokens, caches, pos, logitRows);
        cache.advance(n);
        return logits;
    }

    /**
     * A prompt as the continuation of {@code cache}, in passes of at most {@code chunk} rows.
     *
     * @return the last position's logits [vocab]
     */
    public float[] prefill(int[] tokens, KvCache cache, int chunk) {
        if (chunk < 1) {
            throw new IllegalArgumentException("prefill chunk " + chunk);
        }
        float[] logits = null;
        for (int at = 0; at < tokens.length; at += chunk) {
            int[] part = java.util.Arrays.copyOfRange(tokens, at, Math.min(tokens.length, at + chunk));
            logits = forward(part, cache, part.length - 1);
        }
        if (logits == null) {
            throw new IllegalArgumentException("no tokens");
        }
        return logits;
    }

    /**
     * One decode step for B sequences in lock-step: row b is token tokens[b] of the sequence held
     * in caches[b] (each at its own position). Every weight is read once for all B.
     *
     * @return logits [B, vocab]
     */
    public float[] decodeBatch(int[] tokens, KvCache[] caches) {
        int n = tokens.length;
        if (caches.length != n) {
            throw new IllegalArgumentException(n + " tokens for " + caches.length + " caches");
        }
        int[] pos = new int[n];
        int[] logitRows = new int[n];
        for (int b = 0; b < n; b++) {
            for (int other = 0; other < b; other++) {
                if (caches[other] == caches[b]) {
                    throw new IllegalArgumentException("decodeBatch: the same cache appears twice");
                }
            }
            pos[b] = caches[b].length();
            logitRows[b] = b;
        }
        float[] logits = run(tokens, caches, pos, logitRows);
        for (KvCache kc : caches) {
            kc.advance(1);
        }
        return logits;
    }

    // ----------------------------------------------------------------------------------------
    // The forward pass

    private float[] run(int[] tokens, KvCache[] caches, int[] pos, int[] logitRows) {
        int n = tokens.length;
        int hidden = c.hiddenSize();
        for (int t = 0; t < n; t++) {
            if (tokens[t] < 0 || tokens[t] >= c.vocabSize()) {
                throw new QlabException("token id " + tokens[t] + " is outside the vocabulary [0, " + c.vocabSize() + ")");
            }
            if (pos[t] >= caches[t].capacity()) {
                throw new QlabException("context is full: position " + pos[t] + " does not fit a KV cache of "
                        + caches[t].capacity() + " positions");
            }
        }
        ensureScratch(n);
        ropeTables(pos, n);
        prompt = n > 1;
        for (int t = 1; t < n && prompt; t++) {
            prompt = caches[t] == caches[0];
        }

        // x = embed_tokens[tokens]
        for (int t = 0; t < n; t++) {
            w.embed().copyRow(tokens[t], x, t * hidden);
        }

        for (int l = 0; l < c.numLayers(); l++) {
            LayerWeights L = w.layers()[l];
            // ---- attention block
            rmsnorm(x, L.attnNorm(), xb, n);
            if (observer != null) {
                observer.observe(l, ActivationObserver.Site.ATTN_INPUT, xb, n, hidden);
            }
            projectQkv(L, n);
            for (int t = 0; t < n; t++) {
                addBias(q, t * c.qDim(), L.qBias());
                addBias(k, t * c.kvDim(), L.kBias());
                addBias(v, t * c.kvDim(), L.vBias());
                if (c.qkNorm()) {
                    // Qwen3: each head's q and k RMS-normalised over its headDim entries, before RoPE
                    for (int h = 0; h < c.numHeads(); h++) {
                        rmsnorm(q, t * c.qDim() + h * c.headDim(), L.qNorm(), c.headDim());
                    }
                    for (int h = 0; h < c.numKvHeads(); h++) {
                        rmsnorm(k, t * c.kvDim() + h * c.headDim(), L.kNorm(), c.headDim());
                    }
                }
                rope(q, t * c.qDim(), c.numHeads(), t);
                rope(k, t * c.kvDim(), c.numKvHeads(), t);
                KvType keyType = caches[t].types().keys();
                for (int h = 0; h < c.numHeads() && keyType != KvType.F32; h++) {
                    keyType.roundQuery(q, t * c.qDim() + h * c.headDim(), c.headDim());
                }
                // The cache stores post-RoPE keys at the row's absolute position.
                caches[t].store(l, pos[t], k, t * c.kvDim(), v, t * c.kvDim());
            }
            attention(l, caches, pos, n);
            if (observer != null) {
                observer.observe(l, ActivationObserver.Site.ATTN_OUTPUT, att, n, c.qDim());
            }
            project(L.o(), att, n, tmp);
            addRowBias(tmp, n, L.oBias());
            addInPlace(x, tmp, n * hidden);

            // ---- MLP block
            rmsnorm(x, L.mlpNorm(), xb, n);
            if (observer != null) {
                observer.observe(l, ActivationObserver.Site.MLP_INPUT, xb, n, hidden);
            }
            gateUp(L, n);
            if (observer != null) {
                observer.observe(l, ActivationObserver.Site.MLP_HIDDEN, gate, n, c.intermediateSize());
            }
            project(L.down(), gate, n, tmp);
            addRowBias(tmp, n, L.downBias());
            addInPlace(x, tmp, n * hidden);
        }

        // ---- final norm and LM head, only for the rows whose logits are wanted
        int m = logitRows.length;
        float[] last = new float[m * hidden];
        for (int i = 0; i < m; i++) {
            System.arraycopy(x, logitRows[i] * hidden, last, i * hidden, hidden);
        }
        float[] normed = new float[m * hidden];
        rmsnorm(last, w.finalNorm(), normed, m);
        if (observer != null) {
            observer.observe(-1, ActivationObserver.Site.HEAD_INPUT, normed, m, hidden);
        }
        float[] logits = new float[Math.multiplyExact(m, c.vocabSize())];
        Matrix head = w.lmHead();
        Object prepared = head.prepare(normed, m, prompt, pool);
        pool.forRange(head.rows(), head.rowGrain(prepared), (s, e) -> head.matmul(normed, prepared, m, logits, c.vocabSize(), 0, s, e));
        return logits;
    }

    /** q, k, v = xb Wq^T, xb Wk^T, xb Wv^T in one dispatch over their concatenated rows. */
    private void projectQkv(LayerWeights L, int n) {
        Object pq = L.q().prepare(xb, n, prompt, pool);
        Object pk = L.k().prepareLike(pq, xb, n, prompt, pool);
        Object pv = L.v().prepareLike(pk, xb, n, prompt, pool);
        int qr = L.q().rows();
        int kr = L.k().rows();
        pool.forRange(qr + 2 * kr, L.q().rowGrain(pq), (s, e) -> {
            segment(L.q(), pq, xb, n, q, 0, s, e);
            segment(L.k(), pk, xb, n, k, qr, s, e);
            segment(L.v(), pv, xb, n, v, qr + kr, s, e);
        });
    }

    /** Rows [s, e) of a concatenation, the part that falls in matrix m (which starts at row `base`). */
    private static void segment(Matrix m, Object prepared, float[] in, int n, float[] out, int base, int s, int e) {
        int lo = Math.max(s, base) - base;
        int hi = Math.min(e, base + m.rows()) - base;
        if (lo < hi) {
            m.matmul(in, prepared, n, out, m.rows(), 0, lo, hi);
        }
    }

    /**
     * gate = silu(xb Wg^T) * (xb Wu^T). Each worker takes the same rows of gate and up, so the
     * activation is applied in the same dispatch, on data still in cache.
     */
    private void gateUp(LayerWeights L, int n) {
        int inter = c.intermediateSize();
        Object pg = L.gate().prepare(xb, n, prompt, pool);
        Object pu = L.up().prepareLike(pg, xb, n, prompt, pool);
        pool.forRange(inter, L.gate().rowGrain(pg), (s, e) -> {
            L.gate().matmul(xb, pg, n, gate, inter, 0, s, e);
            L.up().matmul(xb, pu, n, up, inter, 0, s, e);
            for (int t = 0; t < n; t++) {
                if (L.gateBias() != null) {
                    for (int i = s; i < e; i++) {
                        gate[t * inter + i] += L.gateBias()[i];
                        up[t * inter + i] += L.upBias()[i];
                    }
                }
                siluMul(gate, up, t * inter + s, e - s);
            }
        });
    }

    /** out (n, m.rows) = in (n, m.cols) W^T. */
    private void project(Matrix m, float[] in, int n, float[] out) {
        Object prepared = m.prepare(in, n, prompt, pool);
        pool.forRange(m.rows(), m.rowGrain(prepared), (s, e) -> m.matmul(in, prepared, n, out, m.rows(), 0, s, e));
    }

    /**
     * Causal attention of every row over its own cache, positions 0 .. pos inclusive. Work is split
     * into tasks of (up to {@link #QUERY_TILE} consecutive rows of one cache, one KV head); a task
     * walks its KV tiles once, decoding an encoded tile once for all its rows and query heads.
     */
    private void attention(int layer, KvCache[] caches, int[] pos, int n) {
        int kvHeads = c.numKvHeads();
        // Row tiles: runs of consecutive rows of one cache (a prompt is one run; a batched decode step one row each).
        int[] tileStart = new int[n + 1];
        int tiles = 0;
        for (int t = 0; t < n; t++) {
            if (t == 0 || caches[t] != caches[t - 1] || t - tileStart[tiles - 1] == QUERY_TILE) {
                tileStart[tiles++] = t;
            }
        }
        tileStart[tiles] = n;
        int tileCount = tiles;
        pool.forRange(tileCount * kvHeads, 1, (s, e) -> {
            AttentionScratch scratch = attentionScratch.get();
            for (int task = s; task < e; task++) {
                int tile = task / kvHeads;
                attendTile(layer, caches[tileStart[tile]], pos, tileStart[tile], tileStart[tile + 1], task % kvHeads, scratch);
            }
        });
    }

    /** Rows r0 .. r1-1 (one cache) attend with the query heads of KV head kvh; their outputs go to att. */
    private void attendTile(int layer, KvCache cache, int[] pos, int r0, int r1, int kvh, AttentionScratch s) {
        int hd = c.headDim();
        int group = c.groupSize(); // query heads kvh*group .. kvh*group+group-1 share KV head kvh
        int qDim = c.qDim();
        float scale = (float) (1.0 / Math.sqrt(hd));
        int maxPos = 0;
        for (int r = r0; r < r1; r++) {
            maxPos = Math.max(maxPos, pos[r]);
        }
        boolean tiled = maxPos + 1 > kvTile; // some row's context spans tiles
        if (tiled) {
            java.util.Arrays.fill(s.runMax, 0, (r1 - r0) * group, Float.NEGATIVE_INFINITY);
            java.util.Arrays.fill(s.runSum, 0, (r1 - r0) * group, 0f);
            java.util.Arrays.fill(s.acc, 0, (r1 - r0) * group * hd, 0f);
        }
        for (int j0 = 0; j0 <= maxPos; j0 += kvTile) {
            int j1 = Math.min(j0 + kvTile, maxPos + 1);
            KvCache.Tile kt = cache.keys(layer, kvh, j0, j1, s.keys);
            KvCache.Tile vt = cache.values(layer, kvh, j0, j1, s.values);
            for (int r = r0; r < r1; r++) {
                if (pos[r] < j0) {
                    continue;
                }
                int cnt = Math.min(j1, pos[r] + 1) - j0;
                for (int hh = 0; hh < group; hh++) {
                    int qo = r * qDim + (kvh * group + hh) * hd;
                    float max = Float.NEGATIVE_INFINITY;
                    for (int j = 0; j < cnt; j++) {
                        float sc = FloatKernels.dot(q, qo, kt.data(), kt.offset() + j * kt.stride(), hd) * scale;
                        s.scores[j] = sc;
                        max = Math.max(max, sc);
                    }
                    if (pos[r] < kvTile) {
                        // the row's whole context in one tile: the plain softmax, normalised in the weighted sum
                        float sum = expShifted(s.scores, cnt, max);
                        FloatKernels.weightedRows(s.scores, 0, cnt, 1.0f / sum, vt.data(), vt.offset(), vt.stride(), att, qo, hd);
                        continue;
                    }
                    // online softmax: rescale what earlier tiles summed when the running maximum grows
                    int idx = (r - r0) * group + hh;
                    float newMax = Math.max(s.runMax[idx], max);
                    float correction = s.runMax[idx] == Float.NEGATIVE_INFINITY ? 0f : VectorSupport.exp(s.runMax[idx] - newMax);
                    float tileSum = expShifted(s.scores, cnt, newMax);
                    s.runSum[idx] = s.runSum[idx] * correction + tileSum;
                    s.runMax[idx] = newMax;
                    FloatKernels.weightedRows(s.scores, 0, cnt, 1f, vt.data(), vt.offset(), vt.stride(), s.tileOut, 0, hd);
                    int ao = idx * hd;
                    for (int i = 0; i < hd; i++) {
                        s.acc[ao + i] = s.acc[ao + i] * correction + s.tileOut[i];
                    }
                }
            }
        }
        if (tiled) {
            for (int r = r0; r < r1; r++) {
                if (pos[r] < kvTile) {
                    continue;
                }
                for (int hh = 0; hh < group; hh++) {
                    int idx = (r - r0) * group + hh;
                    float inv = 1.0f / s.runSum[idx];
                    int qo = r * qDim + (kvh * group + hh) * hd;
                    for (int i = 0; i < hd; i++) {
                        att[qo + i] = s.acc[idx * hd + i] * inv;
                    }
                }
            }
        }
    }

    /** One worker's attention buffers: a tile's scores, decoded keys and values, and running sums. */
    private static final class AttentionScratch {
        final float[] scores;  // (kvTile)
        final float[] keys;    // decoded tile (kvTile, headDim)
        final float[] values;  // decoded tile (kvTile, headDim)
        final float[] tileOut; // (headDim)
        final float[] runMax;  // (QUERY_TILE * group)
        final float[] runSum;  // (QUERY_TILE * group)
        final float[] acc;     // (QUERY_TILE * group, headDim)

        AttentionScratch(ModelConfig c, int kvTile) {
            int hd = c.headDim();
            int rows = QUERY_TILE * c.groupSize();
            scores = new float[kvTile];
            keys = new float[kvTile * hd];
            values = new float[kvTile * hd];
            tileOut = new float[hd];
            runMax = new float[rows];
            runSum = new float[rows];
            acc = new float[rows * hd];
        }
    }

    // ----------------------------------------------------------------------------------------
    // Element-wise pieces

    /** out (n, hidden) = RMSNorm of each row of in (n, hidden). */
    private void rmsnorm(float[] in, float[] weight, float[] out, int n) {
        int hidden = c.hiddenSize();
        for (int t = 0; t < n; t++) {
            rmsnorm(in, t * hidden, weight, out, t * hidden, hidden);
        }
    }

    /** In place: a[off .. off+len) = RMSNorm over those len entries. */
    private void rmsnorm(float[] a, int off, float[] weight, int len) {
        rmsnorm(a, off, weight, a, off, len);
    }

    /** out[oo + i] = weight[i] * in[io + i] / sqrt(mean(in[io ..]^2) + eps), i < len. */
    private void rmsnorm(float[] in, int io, float[] weight, float[] out, int oo, int len) {
        float eps = (float) c.rmsNormEps();
        float ss = FloatKernels.dot(in, io, in, io, len);
        float r = (float) (1.0 / Math.sqrt(ss / len + eps));
        for (int i = 0; i < len; i++) {
            out[oo + i] = weight[i] * (in[io + i] * r);
        }
    }

    /** a[off + i] += bias[i]; nothing when the model has no such bias. */
    private static void addBias(float[] a, int off, float[] bias) {
        if (bias == null) {
            return;
        }
        for (int i = 0; i < bias.length; i++) {
            a[off + i] += bias[i];
        }
    }

    /** Each of n rows of a (rows of bias.length) += bias; nothing when bias is null. */
    private static void addRowBias(float[] a, int n, float[] bias) {
        if (bias == null) {
            return;
        }
        for (int t = 0; t < n; t++) {
            addBias(a, t * bias.length, bias);
        }
    }

    private static void addInPlace(float[] a, float[] b, int n) {
        for (int i = 0; i < n; i++) {
            a[i] += b[i];
        }
    }

    private void ropeTables(int[] pos, int n) {
        int half = c.headDim() / 2;
        for (int t = 0; t < n; t++) {
            for (int i = 0; i < half; i++) {
                double angle = pos[t] * invFreq[i];
                cos[t * half + i] = (float) Math.cos(angle);
                sin[t * half + i] = (float) Math.sin(angle);
            }
        }
    }

    /** Rotate-half RoPE: pairs (i, i + d/2) rotate together, not adjacent pairs. */
    private void rope(float[] a, int off, int nHeads, int row) {
        int hd = c.headDim();
        int half = hd / 2;
        int to = row * half;
        for (int h = 0; h < nHeads; h++) {
            int b = off + h * hd;
            for (int i = 0; i < half; i++) {
                float x1 = a[b + i];
                float x2 = a[b + i + half];
                float cs = cos[to + i];
                float sn = sin[to + i];
                a[b + i] = x1 * cs - x2 * sn;
                a[b + i + half] = x2 * cs + x1 * sn;
            }
        }
    }

    /** scores[j] = exp(scores[j] - max) for j < len; returns their sum. */
    private static float expShifted(float[] scores, int len, float max) {
        float sum = 0;
        int j = 0;
        if (VectorSupport.ENABLED) {
            int upper = F.loopBound(len);
            FloatVector m = FloatVector.broadcast(F, max);
            for (; j < upper; j += LANES) {
                FloatVector e = VectorSupport.exp(FloatVector.fromArray(F, scores, j).sub(m));
                e.intoArray(scores, j);
                sum += VectorSupport.sum(e);
            }
        }
        for (; j < len; j++) {
            float e = VectorSupport.exp(scores[j] - max);
            scores[j] = e;
            sum += e;
        }
        return sum;
    }

    /** g[i] = silu(g[i]) * u[i] = g / (1 + e^-g) * u for i in [off, off + len). */
    private static void siluMul(float[] g, float[] u, int off, int len) {
        int i = 0;
        if (VectorSupport.ENABLED) {
            int upper = F.loopBound(len);
            for (; i < upper; i += LANES) {
                FloatVector gv = FloatVector.fromArray(F, g, off + i);
                FloatVector sig = VectorSupport.exp(gv.neg()).add(1f);
                gv.div(sig).mul(FloatVector.fromArray(F, u, off + i)).intoArray(g, off + i);
            }
        }
        for (; i < len; i++) {
            float gi = g[off + i];
            g[off + i] = gi / (1f + VectorSupport.exp(-gi)) * u[off + i];
        }
    }

    private void ensureScratch(int n) {
        if (n <= rowsCap) {
            return;
        }
        int cap = Math.max(n, rowsCap * 2);
        x = new float[cap * c.hiddenSize()];
        xb = new float[cap * c.hiddenSize()];
        tmp = new float[cap * c.hiddenSize()];
        q = new float[cap * c.qDim()];
        att = new float[cap * c.qDim()];
        k = new float[cap * c.kvDim()];
        v = new float[cap * c.kvDim()];
        gate = new float[cap * c.intermediateSize()];
        up = new float[cap * c.intermediateSize()];
        cos = new float[cap * c.headDim() / 2];
        sin = new float[cap * c.headDim() / 2];
        rowsCap = cap;
    }
}
