package qlab.engine.tensor;

import jdk.incubator.vector.FloatVector;

/**
 * Prefill and batched decode with the tokens in the vector lanes: six weight rows at a time (twelve
 * for a batch of one vector of tokens or less, and for every batch with AVX-512) are placed in an f32 scratch panel — dequantized by a
 * quantized format, copied by {@link F32Matrix} — then multiplied by the tokens
 * ({@link TokenColumns}). Per column k, a tile broadcasts each of six weights and multiplies it
 * into two vectors of tokens, or each of twelve into one vector (a batch of one vector of tokens):
 * 12 FMAs into 12 accumulators, which with the token vectors and a broadcast fit the 16 registers
 * of AVX2. No horizontal sums: each lane is one output cell.
 *
 * <p>Measured against the former layout (weights in the lanes, 4 rows × 3 tokens, lanes summed at
 * the end), pure f32, one thread, 4866×896 × 16 tokens on this AVX2 machine: 25–34 vs 12–16 G
 * multiply-adds/s (the former needed 7 loads per 12 FMAs and a register more than AVX2 has).
 *
 * <p>Each cell is the sequential fold s = fma(w[k], x[k], s) over k = 0, 1, …, cols − 1 from
 * s = +0, one lane doing exactly what {@link #cellScalar} does; so the result is the same bits
 * whatever the batch, the chunk, the row split and the lane count, and with
 * {@code -Dqlab.vector=false}. It is not bitwise equal to the single-row kernels (those sum in
 * lanes, and quantized ones multiply a group's sum by its scale); both are within the same
 * rounding bound of the exact product.
 *
 * <p>The tiles call only Vector API methods (loads and broadcasts written out, no helpers of
 * ours): C2 inlines those always, a helper of ours only when its heuristics agree, and a helper
 * left as a call boxes every vector it returns, and then a config's speed depends on what ran
 * before it in the JVM (docs/engine.md, "Tried and not kept"). {@code KernelStructureTest} checks
 * the bytecode.
 */
public final class TokenTile {
    private static final int ROWS = 6;

    /** Per worker thread: the dequantized panel and the accumulators' spill, grown to the widest matrix seen. */
    private static final ThreadLocal<float[]> PANEL = ThreadLocal.withInitial(() -> new float[0]);

    private TokenTile() {
    }

    /** Fills dst[offset .. offset + cols) with weight row {@code row} as f32. */
    @FunctionalInterface
    public interface RowSource {
        void row(int row, float[] dst, int offset);
    }

    /**
     * Whether batches wider than one vector take panels of twelve rows too ({@code tile12x2}: 24
     * accumulators): with 16-lane vectors, i.e. AVX-512, which has 32 vector registers. AVX2's 16
     * cannot hold them (see {@link #rows}). On AVX-512 (Zen 4), one 4864×896 q4_0 product of 64
     * tokens, one thread ({@code MatVecBenchmark -p tokens=64 -p batched=tiled}), six-row against
     * twelve-row panels: 43.7 → 46.9 G multiply-adds/s, 896×4864 42.3 → 45.4.
     */
    static final boolean TALL = VectorSupport.LANES >= 16;

    /**
     * Rows per panel for a batch of {@code tokens}: a row range of {@link #rows} that is not a
     * multiple of it computes its last panel in full all the same.
     */
    public static int panelRows(int tokens) {
        return tokens <= VectorSupport.LANES || TALL ? 2 * ROWS : ROWS;
    }

    /** y[yOffset + r + t × yStride] = W[r, :] · x[t, :] for rows [rowStart, rowEnd) and every token of x. */
    public static void rows(RowSource w, int cols, int rowStart, int rowEnd, TokenColumns x, float[] y, int yOffset,
                            int yStride) {
        rows(w, cols, rowStart, rowEnd, x, y, yOffset, yStride, TALL);
    }

    /** {@link #rows}, with twelve-row panels for wide batches or not ({@link #TALL}: the same bits either way). */
    static void rows(RowSource w, int cols, int rowStart, int rowEnd, TokenColumns x, float[] y, int yOffset,
                     int yStride, boolean twelveRows) {
        if (x.cols != cols) {
            throw new IllegalArgumentException("token columns have " + x.cols + " columns, the matrix " + cols);
        }
        // One vector of tokens or less: panels of 12 rows (tile12x1). More: panels of 6 (tile6x2,
        // tile6x1 for a short last chunk), so that a panel and a chunk of a 4864-wide product
        // (114 + 311 KiB) stay in a 512 KiB L2. On AVX2, 12-row panels everywhere measured slower
        // (q4_0, 2 threads, alternating processes): batch-16 decode 64.9/65.8 vs 73.7/78.7 tok/s,
        // 64-token prefill 107.4/101.4 vs 116.0/115.8. With AVX-512 (TALL) wide batches take
        // panels of 12 too (tile12x2, tile12x1 for a short last chunk).
        boolean narrow = x.tokens <= VectorSupport.LANES;
        boolean tall = twelveRows && !narrow;
        int height = narrow || tall ? 2 * ROWS : ROWS; // panelRows(x.tokens) unless told otherwise
        // GROUP panels are dequantized in one pass, then multiplied one by one (see GROUP).
        int group = GROUP * height;
        int out = group * cols;
        float[] panel = PANEL.get();
        if (panel.length < out + 2 * ROWS * TokenColumns.CHUNK) {
            panel = new float[out + 2 * ROWS * TokenColumns.CHUNK];
            PANEL.set(panel);
        }
        for (int g = rowStart; g < rowEnd; g += group) {
            int gn = Math.min(group, rowEnd - g);
            for (int q = 0; q < gn; q++) {
                w.row(g + q, panel, q * cols);
            }
            // A short last panel is padded with zero rows whose cells are never written out.
            int padded = (gn + height - 1) / height * height;
            java.util.Arrays.fill(panel, gn * cols, padded * cols, 0f);
            for (int p = 0; p < gn; p += height) {
                int n = Math.min(height, gn - p);
                int w0 = p * cols;
                for (int t0 = 0; t0 < x.tokens; t0 += TokenColumns.CHUNK) {
                    int width = TokenColumns.chunkWidth(t0, x.tokens);
                    if (narrow || (tall && width != TokenColumns.CHUNK)) {
                        tile12x1(panel, w0, cols, x.values, t0 * cols, panel, out);
                    } else if (tall) {
                        tile12x2(panel, w0, cols, x.values, t0 * cols, panel, out);
                    } else if (width == TokenColumns.CHUNK) {
                        tile6x2(panel, w0, cols, x.values, t0 * cols, panel, out);
                    } else {
                        tile6x1(panel, w0, cols, x.values, t0 * cols, panel, out);
                    }
                    int real = Math.min(width, x.tokens - t0);
                    for (int q = 0; q < n; q++) {
                        int row = yOffset + g + p + q;
                        for (int t = 0; t < real; t++) {
                            y[row + (t0 + t) * yStride] = panel[out + q * width + t];
                        }
                    }
                }
            }
        }
    }

    /**
     * Panels dequantized per pass. A quantized matrix's codes come from DRAM, and dequantizing one
     * panel at a time between tiles waited on its loads (perf: the loads of the dequantizing loop
     * took most of its samples); four panels make one longer stream, which the prefetchers run
     * ahead of. One q8_0 product of 64 tokens, one thread, weights from DRAM ({@code MatVecBenchmark
     * -p tokens=64 -p batched=tiled -p cache=cold}), G multiply-adds/s, one panel vs four per pass,
     * alternating runs: 4864×896 45.2/44.1 vs 46.8/46.5, 896×4864 46.8/45.3 vs 48.0/49.3 (eight
     * and sixteen panels: no better than four). Measured on AVX-512 only, so AVX2 keeps one panel
     * per pass: with its six-row panels four of a 4864-wide product (467 KiB) would not stay in a
     * 512 KiB L2 beside a chunk of tokens, as the comment in {@link #rows} asks.
     */
    static final int GROUP = TALL ? 4 : 1;

    /** Six panel rows from w[w0 ..] (rows cols apart) × a two-vector chunk at x[x0 ..]; results to out[o + row × 2 lanes + token]. */
    private static void tile6x2(float[] w, int w0, int cols, float[] x, int x0, float[] out, int o) {
        int lanes = VectorSupport.LANES;
        FloatVector c00 = FloatVector.zero(VectorSupport.F);
        FloatVector c01 = c00;
        FloatVector c10 = c00;
        FloatVector c11 = c00;
        FloatVector c20 = c00;
        FloatVector c21 = c00;
        FloatVector c30 = c00;
        FloatVector c31 = c00;
        FloatVector c40 = c00;
        FloatVector c41 = c00;
        FloatVector c50 = c00;
        FloatVector c51 = c00;
        int w1 = cols;
        int w2 = 2 * cols;
        int w3 = 3 * cols;
        int w4 = 4 * cols;
        int w5 = 5 * cols;
        for (int k = w0, xi = x0; k < w0 + cols; k++, xi += 2 * lanes) {
            FloatVector x0v = FloatVector.fromArray(VectorSupport.F, x, xi);
            FloatVector x1v = FloatVector.fromArray(VectorSupport.F, x, xi + lanes);
            FloatVector m = FloatVector.broadcast(VectorSupport.F, w[k]);
            c00 = m.fma(x0v, c00);
            c01 = m.fma(x1v, c01);
            m = FloatVector.broadcast(VectorSupport.F, w[w1 + k]);
            c10 = m.fma(x0v, c10);
            c11 = m.fma(x1v, c11);
            m = FloatVector.broadcast(VectorSupport.F, w[w2 + k]);
            c20 = m.fma(x0v, c20);
            c21 = m.fma(x1v, c21);
            m = FloatVector.broadcast(VectorSupport.F, w[w3 + k]);
            c30 = m.fma(x0v, c30);
            c31 = m.fma(x1v, c31);
            m = FloatVector.broadcast(VectorSupport.F, w[w4 + k]);
            c40 = m.fma(x0v, c40);
            c41 = m.fma(x1v, c41);
            m = FloatVector.broadcast(VectorSupport.F, w[w5 + k]);
            c50 = m.fma(x0v, c50);
            c51 = m.fma(x1v, c51);
        }
        int s = 2 * lanes;
        c00.intoArray(out, o);
        c01.intoArray(out, o + lanes);
        c10.intoArray(out, o + s);
        c11.intoArray(out, o + s + lanes);
        c20.intoArray(out, o + 2 * s);
        c21.intoArray(out, o + 2 * s + lanes);
        c30.intoArray(out, o + 3 * s);
        c31.intoArray(out, o + 3 * s + lanes);
        c40.intoArray(out, o + 4 * s);
        c41.intoArray(out, o + 4 * s + lanes);
        c50.intoArray(out, o + 5 * s);
        c51.intoArray(out, o + 5 * s + lanes);
    }


    /**
     * Twelve panel rows from w[w0 ..] (rows cols apart) × a two-vector chunk at x[x0 ..]: 24 accumulators, two token vectors and a
     * broadcast in 32 registers. Results to out[o + row × 2 lanes + token].
     */
    private static void tile12x2(float[] w, int w0, int cols, float[] x, int x0, float[] out, int o) {
        int lanes = VectorSupport.LANES;
        FloatVector c0_0 = FloatVector.zero(VectorSupport.F);
        FloatVector c0_1 = c0_0;
        FloatVector c1_0 = c0_0;
        FloatVector c1_1 = c0_0;
        FloatVector c2_0 = c0_0;
        FloatVector c2_1 = c0_0;
        FloatVector c3_0 = c0_0;
        FloatVector c3_1 = c0_0;
        FloatVector c4_0 = c0_0;
        FloatVector c4_1 = c0_0;
        FloatVector c5_0 = c0_0;
        FloatVector c5_1 = c0_0;
        FloatVector c6_0 = c0_0;
        FloatVector c6_1 = c0_0;
        FloatVector c7_0 = c0_0;
        FloatVector c7_1 = c0_0;
        FloatVector c8_0 = c0_0;
        FloatVector c8_1 = c0_0;
        FloatVector c9_0 = c0_0;
        FloatVector c9_1 = c0_0;
        FloatVector c10_0 = c0_0;
        FloatVector c10_1 = c0_0;
        FloatVector c11_0 = c0_0;
        FloatVector c11_1 = c0_0;
        for (int k = w0, xi = x0; k < w0 + cols; k++, xi += 2 * lanes) {
            FloatVector x0v = FloatVector.fromArray(VectorSupport.F, x, xi);
            FloatVector x1v = FloatVector.fromArray(VectorSupport.F, x, xi + lanes);
            FloatVector m;
            m = FloatVector.broadcast(VectorSupport.F, w[0 * cols + k]);
            c0_0 = m.fma(x0v, c0_0);
            c0_1 = m.fma(x1v, c0_1);
            m = FloatVector.broadcast(VectorSupport.F, w[1 * cols + k]);
            c1_0 = m.fma(x0v, c1_0);
            c1_1 = m.fma(x1v, c1_1);
            m = FloatVector.broadcast(VectorSupport.F, w[2 * cols + k]);
            c2_0 = m.fma(x0v, c2_0);
            c2_1 = m.fma(x1v, c2_1);
            m = FloatVector.broadcast(VectorSupport.F, w[3 * cols + k]);
            c3_0 = m.fma(x0v, c3_0);
            c3_1 = m.fma(x1v, c3_1);
            m = FloatVector.broadcast(VectorSupport.F, w[4 * cols + k]);
            c4_0 = m.fma(x0v, c4_0);
            c4_1 = m.fma(x1v, c4_1);
            m = FloatVector.broadcast(VectorSupport.F, w[5 * cols + k]);
            c5_0 = m.fma(x0v, c5_0);
            c5_1 = m.fma(x1v, c5_1);
            m = FloatVector.broadcast(VectorSupport.F, w[6 * cols + k]);
            c6_0 = m.fma(x0v, c6_0);
            c6_1 = m.fma(x1v, c6_1);
            m = FloatVector.broadcast(VectorSupport.F, w[7 * cols + k]);
            c7_0 = m.fma(x0v, c7_0);
            c7_1 = m.fma(x1v, c7_1);
            m = FloatVector.broadcast(VectorSupport.F, w[8 * cols + k]);
            c8_0 = m.fma(x0v, c8_0);
            c8_1 = m.fma(x1v, c8_1);
            m = FloatVector.broadcast(VectorSupport.F, w[9 * cols + k]);
            c9_0 = m.fma(x0v, c9_0);
            c9_1 = m.fma(x1v, c9_1);
            m = FloatVector.broadcast(VectorSupport.F, w[10 * cols + k]);
            c10_0 = m.fma(x0v, c10_0);
            c10_1 = m.fma(x1v, c10_1);
            m = FloatVector.broadcast(VectorSupport.F, w[11 * cols + k]);
            c11_0 = m.fma(x0v, c11_0);
            c11_1 = m.fma(x1v, c11_1);
        }
        int s = 2 * lanes;
        c0_0.intoArray(out, o + 0 * s);
        c0_1.intoArray(out, o + 0 * s + lanes);
        c1_0.intoArray(out, o + 1 * s);
        c1_1.intoArray(out, o + 1 * s + lanes);
        c2_0.intoArray(out, o + 2 * s);
        c2_1.intoArray(out, o + 2 * s + lanes);
        c3_0.intoArray(out, o + 3 * s);
        c3_1.intoArray(out, o + 3 * s + lanes);
        c4_0.intoArray(out, o + 4 * s);
        c4_1.intoArray(out, o + 4 * s + lanes);
        c5_0.intoArray(out, o + 5 * s);
        c5_1.intoArray(out, o + 5 * s + lanes);
        c6_0.intoArray(out, o + 6 * s);
        c6_1.intoArray(out, o + 6 * s + lanes);
        c7_0.intoArray(out, o + 7 * s);
        c7_1.intoArray(out, o + 7 * s + lanes);
        c8_0.intoArray(out, o + 8 * s);
        c8_1.intoArray(out, o + 8 * s + lanes);
        c9_0.intoArray(out, o + 9 * s);
        c9_1.intoArray(out, o + 9 * s + lanes);
        c10_0.intoArray(out, o + 10 * s);
        c10_1.intoArray(out, o + 10 * s + lanes);
        c11_0.intoArray(out, o + 11 * s);
        c11_1.intoArray(out, o + 11 * s + lanes);
    }

    /**
     * Twelve panel rows from w[w0 ..] × a one-vector chunk at x[x0 ..] (a batch of one vector of tokens or
     * less): 12 accumulators, as many as the two-vector tile, where six
     * rows would leave the FMA units waiting on their latency. Results to out[o + row × lanes + token].
     */
    private static void tile12x1(float[] w, int w0, int cols, float[] x, int x0, float[] out, int o) {
        int lanes = VectorSupport.LANES;
        FloatVector c0 = FloatVector.zero(VectorSupport.F);
        FloatVector c1 = c0;
        FloatVector c2 = c0;
        FloatVector c3 = c0;
        FloatVector c4 = c0;
        FloatVector c5 = c0;
        FloatVector c6 = c0;
        FloatVector c7 = c0;
        FloatVector c8 = c0;
        FloatVector c9 = c0;
        FloatVector c10 = c0;
        FloatVector c11 = c0;
        for (int k = w0, xi = x0; k < w0 + cols; k++, xi += lanes) {
            FloatVector xv = FloatVector.fromArray(VectorSupport.F, x, xi);
            c0 = FloatVector.broadcast(VectorSupport.F, w[k]).fma(xv, c0);
            c1 = FloatVector.broadcast(VectorSupport.F, w[cols + k]).fma(xv, c1);
            c2 = FloatVector.broadcast(VectorSupport.F, w[2 * cols + k]).fma(xv, c2);
            c3 = FloatVector.broadcast(VectorSupport.F, w[3 * cols + k]).fma(xv, c3);
            c4 = FloatVector.broadcast(VectorSupport.F, w[4 * cols + k]).fma(xv, c4);
            c5 = FloatVector.broadcast(VectorSupport.F, w[5 * cols + k]).fma(xv, c5);
            c6 = FloatVector.broadcast(VectorSupport.F, w[6 * cols + k]).fma(xv, c6);
            c7 = FloatVector.broadcast(VectorSupport.F, w[7 * cols + k]).fma(xv, c7);
            c8 = FloatVector.broadcast(VectorSupport.F, w[8 * cols + k]).fma(xv, c8);
            c9 = FloatVector.broadcast(VectorSupport.F, w[9 * cols + k]).fma(xv, c9);
            c10 = FloatVector.broadcast(VectorSupport.F, w[10 * cols + k]).fma(xv, c10);
            c11 = FloatVector.broadcast(VectorSupport.F, w[11 * cols + k]).fma(xv, c11);
        }
        c0.intoArray(out, o);
        c1.intoArray(out, o + lanes);
        c2.intoArray(out, o + 2 * lanes);
        c3.intoArray(out, o + 3 * lanes);
        c4.intoArray(out, o + 4 * lanes);
        c5.intoArray(out, o + 5 * lanes);
        c6.intoArray(out, o + 6 * lanes);
        c7.intoArray(out, o + 7 * lanes);
        c8.intoArray(out, o + 8 * lanes);
        c9.intoArray(out, o + 9 * lanes);
        c10.intoArray(out, o + 10 * lanes);
        c11.intoArray(out, o + 11 * lanes);
    }

    /** Six panel rows from w[w0 ..] × a one-vector chunk (a wide batch's last); results to out[o + row × lanes + token]. */
    private static void tile6x1(float[] w, int w0, int cols, float[] x, int x0, float[] out, int o) {
        int lanes = VectorSupport.LANES;
        FloatVector c0 = FloatVector.zero(VectorSupport.F);
        FloatVector c1 = c0;
        FloatVector c2 = c0;
        FloatVector c3 = c0;
        FloatVector c4 = c0;
        FloatVector c5 = c0;
        for (int k = w0, xi = x0; k < w0 + cols; k++, xi += lanes) {
            FloatVector xv = FloatVector.fromArray(VectorSupport.F, x, xi);
            c0 = FloatVector.broadcast(VectorSupport.F, w[k]).fma(xv, c0);
            c1 = FloatVector.broadcast(VectorSupport.F, w[cols + k]).fma(xv, c1);
            c2 = FloatVector.broadcast(VectorSupport.F, w[2 * cols + k]).fma(xv, c2);
            c3 = FloatVector.broadcast(VectorSupport.F, w[3 * cols + k]).fma(xv, c3);
            c4 = FloatVector.broadcast(VectorSupport.F, w[4 * cols + k]).fma(xv, c4);
            c5 = FloatVector.broadcast(VectorSupport.F, w[5 * cols + k]).fma(xv, c5);
        }
        c0.intoArray(out, o);
        c1.intoArray(out, o + lanes);
        c2.intoArray(out, o + 2 * lanes);
        c3.intoArray(out, o + 3 * lanes);
        c4.intoArray(out, o + 4 * lanes);
        c5.intoArray(out, o + 5 * lanes);
    }

    /**
     * Scalar reference of one cell: the dequantized row w[w0 .. w0 + cols) times token t of x,
     * folded with fma from column 0 on, as every lane of the tiles does it.
     */
    public static float cellScalar(float[] w, int w0, TokenColumns x, int t) {
        float s = 0f;
        for (int k = 0; k < x.cols; k++) {
            s = Math.fma(w[w0 + k], x.at(t, k), s);
        }
        return s;
    }
}
