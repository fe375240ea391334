package qlab.quant.format;

/**
 * llama.cpp's quantizers for its legacy block types (ggml-quants.c at the commit the fixtures
 * name), re-implemented from their rules so that a format carrying ggml's name writes the codes
 * and scales llama.cpp writes for the same floats, with and without importance weights.
 *
 * <p>What a block gets: an fp16 scale d, for the affine types an fp16 minimum m (value = d·q + m),
 * and unsigned codes q as ggml stores them (q8_0: the signed byte; q4_0: level + 8; q5_0: level
 * + 16; q4_1, q5_1: q itself). Without importance every type uses its reference rule: the scale
 * from the block's extreme, codes by truncating x·(1/d) plus a bias in f32 — so exact ties round
 * upward, and codes are chosen against the unrounded f32 scale, not the stored fp16 one. With
 * importance, q4_0/q5_0 search 19 scales around the extreme's ({@link #symmetricSearch}) and
 * q4_1/q5_1 37 (scale, min) pairs ({@link #affineSearch}), each weighted by
 * importance × sqrt(σ² + x²); q8_0 ignores importance.
 *
 * <p>Every operation is a separate f32 operation in C's order (no fused multiply-add: the
 * goldens were computed without), float-to-int conversions truncate as x86's cvttss2si does.
 */
enum GgmlRule {
    Q8_0(false, 127),
    Q4_0(false, 8),
    Q5_0(false, 16),
    Q4_1(true, 15),
    Q5_1(true, 31);

    /** Whether a block stores a minimum (value = d·q + m) rather than a signed grid (value = d·(q − nmax)). */
    final boolean affine;
    /** q8_0: the largest level; q4_0/q5_0: the grid's negative end in magnitude; q4_1/q5_1: the largest code. */
    final int nmax;

    GgmlRule(boolean affine, int nmax) {
        this.affine = affine;
        this.nmax = nmax;
    }

    /** Output of one row: per block the stored fp16 bits, per value its ggml code. */
    record Blocks(short[] d, short[] m, int[] codes) {
        Blocks(int blocks, int values) {
            this(new short[blocks], new short[blocks], new int[values]);
        }
    }

    /**
     * Quantizes x[off .. off + cols) in blocks of {@code block} values; a last partial block is
     * padded with zeros (weight 0). {@code importance} null: the reference rule.
     */
    Blocks quantize(float[] x, int off, int cols, float[] importance, int block) {
        int blocks = (cols + block - 1) / block;
        Blocks out = new Blocks(blocks, blocks * block);
        float[] xb = new float[block];
        float[] wb = new float[block];
        boolean searching = importance != null && this != Q8_0;
        float sigma2 = 0;
        if (searching) {
            float sumX2 = 0;
            for (int j = 0; j < cols; j++) {
                sumX2 += x[off + j] * x[off + j];
            }
            sigma2 = sumX2 / cols;
        }
        for (int b = 0; b < blocks; b++) {
            int start = b * block;
            int n = Math.min(block, cols - start);
            java.util.Arrays.fill(xb, 0f);
            java.util.Arrays.fill(wb, 0f);
            System.arraycopy(x, off + start, xb, 0, n);
            if (searching) {
                for (int j = 0; j < n; j++) {
                    wb[j] = importance[start + j] * (float) Math.sqrt(sigma2 + xb[j] * xb[j]);
                }
                if (affine) {
                    affineSearch(xb, wb, out, b, start);
                } else {
                    symmetricSearch(xb, wb, out, b, start);
                }
            } else {
                reference(xb, out, b, start);
            }
        }
        return out;
    }

    // ---------------------------------------------------------------- reference rules

    private void reference(float[] x, Blocks out, int b, int at) {
        int n = x.length;
        if (this == Q8_0) {
            float amax = 0;
            for (float v : x) {
                amax = Math.max(amax, Math.abs(v));
            }
            float d = amax / 127;
            float id = d != 0 ? 1.0f / d : 0.0f;
            out.d[b] = fp16(d);
            for (int j = 0; j < n; j++) {
                out.codes[at + j] = (byte) truncate(roundHalfAway(x[j] * id)) & 0xFF;
            }
            return;
        }
        if (!affine) {
            // d = m / −nmax, m the value of largest magnitude (the first, on ties): it lands on code 0.
            float amax = 0;
            float max = 0;
            for (float v : x) {
                if (amax < Math.abs(v)) {
                    amax = Math.abs(v);
                    max = v;
                }
            }
            float d = max / -nmax;
            float id = d != 0 ? 1.0f / d : 0.0f;
            out.d[b] = fp16(d);
            float bias = nmax + 0.5f;
            int top = 2 * nmax - 1;
            for (int j = 0; j < n; j++) {
                out.codes[at + j] = Math.min(top, (byte) truncate(x[j] * id + bias)) & 0xFF;
            }
            return;
        }
        float min = Float.MAX_VALUE;
        float max = -Float.MAX_VALUE;
        for (float v : x) {
            if (v < min) {
                min = v;
            }
            if (v > max) {
                max = v;
            }
        }
        float d = (max - min) / nmax;
        float id = d != 0 ? 1.0f / d : 0.0f;
        out.d[b] = fp16(d);
        out.m[b] = fp16(min);
        for (int j = 0; j < n; j++) {
            int t = truncate((x[j] - min) * id + 0.5f);
            // q4_1 clamps to 15 through a signed byte; q5_1 keeps the low byte unclamped.
            out.codes[at + j] = (this == Q4_1 ? Math.min(15, (byte) t) : t) & 0xFF;
        }
    }

    // ---------------------------------------------------------------- importance searches

    /**
     * q4_0, q5_0 with importance (ggml's make_qx_quants, weighted): levels l in [−nmax, nmax − 1]
     * for inverse scales −(nmax + 0.1·k)/m, k in −9..9 (m the largest-magnitude value); the
     * least-squares scale Σwxl/Σwl² of the candidate maximising (Σwxl)²/Σwl² wins.
     */
    private void symmetricSearch(float[] x, float[] w, Blocks out, int b, int at) {
        int[] levels = new int[x.length]; // level + nmax
        out.d[b] = fp16(GgmlSearch.makeQxQuants(x.length, nmax, x, 0, levels, 0, w, 0));
        System.arraycopy(levels, 0, out.codes, at, x.length);
    }

    /**
     * q4_1, q5_1 with importance (ggml's make_qkx3_quants, squared error): from min(x, 0) and
     * max(x), inverse scales (nmax − 0.9 + 0.05·k)/(max − min), k in 0..36; each candidate's codes
     * get the weighted least-squares scale and min (min clamped to ≤ 0), and the candidate with the
     * least weighted squared error wins. The search's min moves with the best candidate so far.
     */
    private void affineSearch(float[] x, float[] w, Blocks out, int b, int at) {
        int n = x.length;
        float min = x[0];
        float max = x[0];
        float sumW = w[0];
        float sumX = sumW * x[0];
        for (int i = 1; i < n; i++) {
            if (x[i] < min) {
                min = x[i];
            }
            if (x[i] > max) {
                max = x[i];
            }
            sumW += w[i];
            sumX += w[i] * x[i];
        }
        if (min > 0) {
            min = 0;
        }
        if (max <= min) {
            out.d[b] = fp16(0f);
            out.m[b] = fp16(min); // −(−min): ggml stores the negated "the_min"
            return;
        }
        int[] levels = new int[n];
        int[] aux = new int[n];
        float iscale = nmax / (max - min);
        float scale = 1 / iscale;
        float bestError = 0;
        for (int i = 0; i < n; i++) {
            levels[i] = Math.max(0, Math.min(nmax, GgmlSearch.nearestInt(iscale * (x[i] - min))));
            float diff = scale * levels[i] + min - x[i];
            bestError += w[i] * (diff * diff);
        }
        for (int is = 0; is <= 36; is++) {
            iscale = (-0.9f + 0.05f * is + nmax) / (max - min);
            float sumL = 0;
            float sumL2 = 0;
            float sumXL = 0;
            for (int i = 0; i < n; i++) {
                // min is the best fit so far and may sit at or near max: v can be inf, NaN or huge.
                float v = iscale * (x[i] - min);
                int l = v > 0 ? GgmlSearch.nearestInt(v < nmax ? v : nmax) : 0;
                aux[i] = l;
                sumL += w[i] * l;
                sumL2 += w[i] * l * l;
                sumXL += w[i] * l * x[i];
            }
            float det = sumW * sumL2 - sumL * sumL;
            if (det > 0) {
                float thisScale = (sumW * sumXL - sumX * sumL) / det;
                float thisMin = (sumL2 * sumX - sumL * sumXL) / det;
                if (thisMin > 0) {
                    thisMin = 0;
                    thisScale = sumXL / sumL2;
                }
                float error = 0;
                for (int i = 0; i < n; i++) {
                    float diff = thisScale * aux[i] + thisMin - x[i];
                    error += w[i] * (diff * diff);
                }
                if (error < bestError) {
                    System.arraycopy(aux, 0, levels, 0, n);
                    bestError = error;
                    scale = thisScale;
                    min = thisMin;
                }
            }
        }
        out.d[b] = fp16(scale);
        out.m[b] = fp16(min);
        System.arraycopy(levels, 0, out.codes, at, n);
    }

    // ---------------------------------------------------------------- C arithmetic

    /** C's float-to-int conversion as x86's cvttss2si does it: toward zero, NaN and out-of-range give INT_MIN. */
    static int truncate(float f) {
        if (Float.isNaN(f) || f >= 2147483648f || f < -2147483648f) {
            return Integer.MIN_VALUE;
        }
        return (int) f;
    }

    /** C's roundf: nearest, ties away from zero, as a float. */
    static float roundHalfAway(float f) {
        if (Float.isNaN(f) || Float.isInfinite(f)) {
            return f;
        }
        return (float) Math.copySign(Math.floor(Math.abs((double) f) + 0.5), f);
    }

    /** ggml's FP32_TO_FP16: nearest even, overflow to ±inf, a NaN as the quiet NaN 0x7e00 with its sign. */
    static short fp16(float f) {
        if (Float.isNaN(f)) {
            return (short) ((Float.floatToRawIntBits(f) >>> 16 & 0x8000) | 0x7e00);
        }
        return Float.floatToFloat16(f);
    }
}
