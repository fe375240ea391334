package qlab.engine.train;

import static qlab.engine.tensor.VectorSupport.F;
import static qlab.engine.tensor.VectorSupport.LANES;

import jdk.incubator.vector.FloatVector;
import qlab.engine.tensor.VectorSupport;
import qlab.engine.util.WorkerPool;

/**
 * The matrix products of training, one blocked kernel for all three:
 * <pre>
 *   Y   = X · Wᵀ     X (n, in), Wᵀ (in, out) given transposed -> Y (n, out)     (forward)
 *   dX  = dY · W     dY (n, out), W (out, in)                  -> dX (n, in)    (backward)
 *   dW += dYᵀ · X    dY (n, out), X (n, in)                    -> dW (out, in)  (backward)
 * </pre>
 * Each is C[a, b] (+)= Σ_k A[a, k] · B[k, b] with B row-major and A read through two strides
 * (dY as it is for dX, dY transposed in place for dW), so only the forward's W is ever transposed
 * (once per pass, out × in values against n × out × in multiply-adds).
 * A tile keeps twelve rows × two vectors of C in registers (24 accumulators), walks k loading two
 * vectors of B and broadcasting twelve values of A: 24 FMAs per 14 loads. k runs in blocks of
 * {@link #K_BLOCK} so a block of B stays in L2 while every row tile of a thread's share passes over it.
 *
 * <p>The engine's inference tiles ({@code TokenTile}) compute Y = X · Wᵀ too, and training used
 * them at first; this kernel measured faster for training's shapes because its results are whole
 * rows of C stored as vectors, where the token tile scatters each cell to its own cache line
 * (measured in docs/engine.md, "Tried and not kept").
 *
 * <p>Every cell is the fold c = fma(A[a, k], B[k, b], c) over k = 0, 1, …, K − 1 from its initial
 * value (zero, or the gradient accumulated so far): exactly what {@link #productScalar} does, so the
 * result is the same bits whatever the thread count, the tile taken, the lane count, and with
 * {@code -Dqlab.vector=false}. Threads split the rows of C; no cell is written by two.
 */
public final class BlockedProducts {

    static final int TILE_ROWS = 12;
    /** Rows of B per pass: 256 rows of a 1024-wide B are 1 MiB, half the L2. */
    static final int K_BLOCK = 256;

    private BlockedProducts() {}

    /** y (n, out) = x (n, in) · wᵀ, given wt = wᵀ (in, out); y is overwritten. Multiply-adds: n × out × in. */
    public static void forward(float[] x, float[] wt, float[] y, int n, int in, int out, WorkerPool pool) {
        product(x, 0, in, 1, wt, out, y, out, n, in, out, false, pool);
    }

    /** wt (cols, rows) = wᵀ for w (rows, cols), columns of w shared by the pool's threads. */
    public static void transpose(float[] w, int rows, int cols, float[] wt, WorkerPool pool) {
        pool.forRange(cols, 16, (s, e) -> {
            for (int r = 0; r < rows; r++) {
                for (int i = s; i < e; i++) {
                    wt[i * rows + r] = w[r * cols + i];
                }
            }
        });
    }

    /** dx (n, in) = dy (n, out) · w (out, in); dx is overwritten. Multiply-adds: n × out × in. */
    public static void dX(float[] dy, float[] w, float[] dx, int n, int out, int in, WorkerPool pool) {
        product(dy, 0, out, 1, w, in, dx, in, n, out, in, false, pool);
    }

    /** dw (out, in) += dy (n, out)ᵀ · x (n, in). Multiply-adds: n × out × in. */
    public static void dW(float[] dy, float[] x, float[] dw, int n, int out, int in, WorkerPool pool) {
        product(dy, 0, 1, out, x, in, dw, in, out, n, in, true, pool);
    }

    /**
     * C (m, cols) (+)= A (m, k) · B (k, cols), A[a, k] = a[aOff + a × aRow + k × aCol], B[k, b] = b[k × ldb + b],
     * C[a, b] = c[a × ldc + b]; C is zeroed first unless {@code accumulate}.
     */
    public static void product(float[] a, int aOff, int aRow, int aCol, float[] b, int ldb, float[] c, int ldc,
                               int m, int k, int cols, boolean accumulate, WorkerPool pool) {
        if (!VectorSupport.ENABLED) {
            productScalar(a, aOff, aRow, aCol, b, ldb, c, ldc, m, k, cols, accumulate, 0, m);
            return;
        }
        pool.forRange(m, TILE_ROWS, (s, e) -> rows(a, aOff, aRow, aCol, b, ldb, c, ldc, k, cols, accumulate, s, e));
    }

    /** The specification: one fma per (cell, k), k ascending, for rows [rowStart, rowEnd). */
    public static void productScalar(float[] a, int aOff, int aRow, int aCol, float[] b, int ldb, float[] c, int ldc,
                                     int m, int k, int cols, boolean accumulate, int rowStart, int rowEnd) {
        for (int r = rowStart; r < rowEnd; r++) {
            for (int j = 0; j < cols; j++) {
                float s = accumulate ? c[r * ldc + j] : 0f;
                for (int kk = 0; kk < k; kk++) {
                    s = Math.fma(a[aOff + r * aRow + kk * aCol], b[kk * ldb + j], s);
                }
                c[r * ldc + j] = s;
            }
        }
    }

    /**
     * Rows [s, e) of C: k blocks outermost, then row tiles, then column panels (panels outside
     * the row tiles measured slower: docs/engine.md, "Tried and not kept").
     */
    private static void rows(float[] a, int aOff, int aRow, int aCol, float[] b, int ldb, float[] c, int ldc,
                             int k, int cols, boolean accumulate, int s, int e) {
        if (!accumulate) {
            for (int r = s; r < e; r++) {
                java.util.Arrays.fill(c, r * ldc, r * ldc + cols, 0f);
            }
        }
        int wide = cols / (2 * LANES) * (2 * LANES);
        int narrow = cols / LANES * LANES;
        for (int k0 = 0; k0 < k; k0 += K_BLOCK) {
            int k1 = Math.min(k, k0 + K_BLOCK);
            int a0 = s;
            for (; a0 + TILE_ROWS <= e; a0 += TILE_ROWS) {
                for (int b0 = 0; b0 < wide; b0 += 2 * LANES) {
                    tile12x2(a, aOff, aRow, aCol, b, ldb, c, ldc, a0, b0, k0, k1);
                }
                if (wide < narrow) {
                    tile12x1(a, aOff, aRow, aCol, b, ldb, c, ldc, a0, wide, k0, k1);
                }
            }
            // The rest in fours (eight accumulators: a single row's one chain waits on each FMA's latency), then singly.
            for (; a0 + 4 <= e; a0 += 4) {
                for (int b0 = 0; b0 < wide; b0 += 2 * LANES) {
                    tile4x2(a, aOff, aRow, aCol, b, ldb, c, ldc, a0, b0, k0, k1);
                }
                for (int r = a0; r < a0 + 4 && wide < narrow; r++) {
                    row1x1(a, aOff, aRow, aCol, b, ldb, c, ldc, r, wide, k0, k1);
                }
            }
            for (; a0 < e; a0++) {
                for (int b0 = 0; b0 < narrow; b0 += LANES) {
                    row1x1(a, aOff, aRow, aCol, b, ldb, c, ldc, a0, b0, k0, k1);
                }
            }
            // Columns past the last whole vector, every row of the range.
            for (int r = s; r < e; r++) {
                for (int j = narrow; j < cols; j++) {
                    float acc = c[r * ldc + j];
                    for (int kk = k0; kk < k1; kk++) {
                        acc = Math.fma(a[aOff + r * aRow + kk * aCol], b[kk * ldb + j], acc);
                    }
                    c[r * ldc + j] = acc;
                }
            }
        }
    }

    /** One row of C, one vector of columns from b0, over k in [k0, k1). */
    private static void row1x1(float[] a, int aOff, int aRow, int aCol, float[] b, int ldb, float[] c, int ldc,
                               int r, int b0, int k0, int k1) {
        FloatVector acc = FloatVector.fromArray(F, c, r * ldc + b0);
        int ar = aOff + r * aRow;
        for (int k = k0; k < k1; k++) {
            acc = FloatVector.broadcast(F, a[ar + k * aCol]).fma(FloatVector.fromArray(F, b, k * ldb + b0), acc);
        }
        acc.intoArray(c, r * ldc + b0);
    }

    /** Rows a0 .. a0+11 of C, two vectors of columns from b0, over k in [k0, k1): 24 accumulators. */
    private static void tile12x2(float[] a, int aOff, int aRow, int aCol, float[] b, int ldb, float[] c, int ldc,
                                 int a0, int b0, int k0, int k1) {
        int lanes = LANES;
        int r0 = (a0 + 0) * ldc + b0;
        int r1 = (a0 + 1) * ldc + b0;
        int r2 = (a0 + 2) * ldc + b0;
        int r3 = (a0 + 3) * ldc + b0;
        int r4 = (a0 + 4) * ldc + b0;
        int r5 = (a0 + 5) * ldc + b0;
        int r6 = (a0 + 6) * ldc + b0;
        int r7 = (a0 + 7) * ldc + b0;
        int r8 = (a0 + 8) * ldc + b0;
        int r9 = (a0 + 9) * ldc + b0;
        int r10 = (a0 + 10) * ldc + b0;
        int r11 = (a0 + 11) * ldc + b0;
        FloatVector c0_0 = FloatVector.fromArray(F, c, r0);
        FloatVector c0_1 = FloatVector.fromArray(F, c, r0 + lanes);
        FloatVector c1_0 = FloatVector.fromArray(F, c, r1);
        FloatVector c1_1 = FloatVector.fromArray(F, c, r1 + lanes);
        FloatVector c2_0 = FloatVector.fromArray(F, c, r2);
        FloatVector c2_1 = FloatVector.fromArray(F, c, r2 + lanes);
        FloatVector c3_0 = FloatVector.fromArray(F, c, r3);
        FloatVector c3_1 = FloatVector.fromArray(F, c, r3 + lanes);
        FloatVector c4_0 = FloatVector.fromArray(F, c, r4);
        FloatVector c4_1 = FloatVector.fromArray(F, c, r4 + lanes);
        FloatVector c5_0 = FloatVector.fromArray(F, c, r5);
        FloatVector c5_1 = FloatVector.fromArray(F, c, r5 + lanes);
        FloatVector c6_0 = FloatVector.fromArray(F, c, r6);
        FloatVector c6_1 = FloatVector.fromArray(F, c, r6 + lanes);
        FloatVector c7_0 = FloatVector.fromArray(F, c, r7);
        FloatVector c7_1 = FloatVector.fromArray(F, c, r7 + lanes);
        FloatVector c8_0 = FloatVector.fromArray(F, c, r8);
        FloatVector c8_1 = FloatVector.fromArray(F, c, r8 + lanes);
        FloatVector c9_0 = FloatVector.fromArray(F, c, r9);
        FloatVector c9_1 = FloatVector.fromArray(F, c, r9 + lanes);
        FloatVector c10_0 = FloatVector.fromArray(F, c, r10);
        FloatVector c10_1 = FloatVector.fromArray(F, c, r10 + lanes);
        FloatVector c11_0 = FloatVector.fromArray(F, c, r11);
        FloatVector c11_1 = FloatVector.fromArray(F, c, r11 + lanes);
        int ar = aOff + a0 * aRow;
        for (int k = k0; k < k1; k++) {
            int bk = k * ldb + b0;
            FloatVector x0 = FloatVector.fromArray(F, b, bk);
            FloatVector x1 = FloatVector.fromArray(F, b, bk + lanes);
            int ak = ar + k * aCol;
            FloatVector m;
            m = FloatVector.broadcast(F, a[ak + 0 * aRow]);
            c0_0 = m.fma(x0, c0_0);
            c0_1 = m.fma(x1, c0_1);
            m = FloatVector.broadcast(F, a[ak + 1 * aRow]);
            c1_0 = m.fma(x0, c1_0);
            c1_1 = m.fma(x1, c1_1);
            m = FloatVector.broadcast(F, a[ak + 2 * aRow]);
            c2_0 = m.fma(x0, c2_0);
            c2_1 = m.fma(x1, c2_1);
            m = FloatVector.broadcast(F, a[ak + 3 * aRow]);
            c3_0 = m.fma(x0, c3_0);
            c3_1 = m.fma(x1, c3_1);
            m = FloatVector.broadcast(F, a[ak + 4 * aRow]);
            c4_0 = m.fma(x0, c4_0);
            c4_1 = m.fma(x1, c4_1);
            m = FloatVector.broadcast(F, a[ak + 5 * aRow]);
            c5_0 = m.fma(x0, c5_0);
            c5_1 = m.fma(x1, c5_1);
            m = FloatVector.broadcast(F, a[ak + 6 * aRow]);
            c6_0 = m.fma(x0, c6_0);
            c6_1 = m.fma(x1, c6_1);
            m = FloatVector.broadcast(F, a[ak + 7 * aRow]);
            c7_0 = m.fma(x0, c7_0);
            c7_1 = m.fma(x1, c7_1);
            m = FloatVector.broadcast(F, a[ak + 8 * aRow]);
            c8_0 = m.fma(x0, c8_0);
            c8_1 = m.fma(x1, c8_1);
            m = FloatVector.broadcast(F, a[ak + 9 * aRow]);
            c9_0 = m.fma(x0, c9_0);
            c9_1 = m.fma(x1, c9_1);
            m = FloatVector.broadcast(F, a[ak + 10 * aRow]);
            c10_0 = m.fma(x0, c10_0);
            c10_1 = m.fma(x1, c10_1);
            m = FloatVector.broadcast(F, a[ak + 11 * aRow]);
            c11_0 = m.fma(x0, c11_0);
            c11_1 = m.fma(x1, c11_1);
        }
        c0_0.intoArray(c, r0);
        c0_1.intoArray(c, r0 + lanes);
        c1_0.intoArray(c, r1);
        c1_1.intoArray(c, r1 + lanes);
        c2_0.intoArray(c, r2);
        c2_1.intoArray(c, r2 + lanes);
        c3_0.intoArray(c, r3);
        c3_1.intoArray(c, r3 + lanes);
        c4_0.intoArray(c, r4);
        c4_1.intoArray(c, r4 + lanes);
        c5_0.intoArray(c, r5);
        c5_1.intoArray(c, r5 + lanes);
        c6_0.intoArray(c, r6);
        c6_1.intoArray(c, r6 + lanes);
        c7_0.intoArray(c, r7);
        c7_1.intoArray(c, r7 + lanes);
        c8_0.intoArray(c, r8);
        c8_1.intoArray(c, r8 + lanes);
        c9_0.intoArray(c, r9);
        c9_1.intoArray(c, r9 + lanes);
        c10_0.intoArray(c, r10);
        c10_1.intoArray(c, r10 + lanes);
        c11_0.intoArray(c, r11);
        c11_1.intoArray(c, r11 + lanes);
    }

    /** Rows a0 .. a0+11 of C, one vector of columns from b0, over k in [k0, k1): 12 accumulators. */
    private static void tile12x1(float[] a, int aOff, int aRow, int aCol, float[] b, int ldb, float[] c, int ldc,
                                 int a0, int b0, int k0, int k1) {
        int lanes = LANES;
        int r0 = (a0 + 0) * ldc + b0;
        int r1 = (a0 + 1) * ldc + b0;
        int r2 = (a0 + 2) * ldc + b0;
        int r3 = (a0 + 3) * ldc + b0;
        int r4 = (a0 + 4) * ldc + b0;
        int r5 = (a0 + 5) * ldc + b0;
        int r6 = (a0 + 6) * ldc + b0;
        int r7 = (a0 + 7) * ldc + b0;
        int r8 = (a0 + 8) * ldc + b0;
        int r9 = (a0 + 9) * ldc + b0;
        int r10 = (a0 + 10) * ldc + b0;
        int r11 = (a0 + 11) * ldc + b0;
        FloatVector c0_0 = FloatVector.fromArray(F, c, r0);
        FloatVector c1_0 = FloatVector.fromArray(F, c, r1);
        FloatVector c2_0 = FloatVector.fromArray(F, c, r2);
        FloatVector c3_0 = FloatVector.fromArray(F, c, r3);
        FloatVector c4_0 = FloatVector.fromArray(F, c, r4);
        FloatVector c5_0 = FloatVector.fromArray(F, c, r5);
        FloatVector c6_0 = FloatVector.fromArray(F, c, r6);
        FloatVector c7_0 = FloatVector.fromArray(F, c, r7);
        FloatVector c8_0 = FloatVector.fromArray(F, c, r8);
        FloatVector c9_0 = FloatVector.fromArray(F, c, r9);
        FloatVector c10_0 = FloatVector.fromArray(F, c, r10);
        FloatVector c11_0 = FloatVector.fromArray(F, c, r11);
        int ar = aOff + a0 * aRow;
        for (int k = k0; k < k1; k++) {
            int bk = k * ldb + b0;
            FloatVector x0 = FloatVector.fromArray(F, b, bk);
            int ak = ar + k * aCol;
            FloatVector m;
            m = FloatVector.broadcast(F, a[ak + 0 * aRow]);
            c0_0 = m.fma(x0, c0_0);
            m = FloatVector.broadcast(F, a[ak + 1 * aRow]);
            c1_0 = m.fma(x0, c1_0);
            m = FloatVector.broadcast(F, a[ak + 2 * aRow]);
            c2_0 = m.fma(x0, c2_0);
            m = FloatVector.broadcast(F, a[ak + 3 * aRow]);
            c3_0 = m.fma(x0, c3_0);
            m = FloatVector.broadcast(F, a[ak + 4 * aRow]);
            c4_0 = m.fma(x0, c4_0);
            m = FloatVector.broadcast(F, a[ak + 5 * aRow]);
            c5_0 = m.fma(x0, c5_0);
            m = FloatVector.broadcast(F, a[ak + 6 * aRow]);
            c6_0 = m.fma(x0, c6_0);
            m = FloatVector.broadcast(F, a[ak + 7 * aRow]);
            c7_0 = m.fma(x0, c7_0);
            m = FloatVector.broadcast(F, a[ak + 8 * aRow]);
            c8_0 = m.fma(x0, c8_0);
            m = FloatVector.broadcast(F, a[ak + 9 * aRow]);
            c9_0 = m.fma(x0, c9_0);
            m = FloatVector.broadcast(F, a[ak + 10 * aRow]);
            c10_0 = m.fma(x0, c10_0);
            m = FloatVector.broadcast(F, a[ak + 11 * aRow]);
            c11_0 = m.fma(x0, c11_0);
        }
        c0_0.intoArray(c, r0);
        c1_0.intoArray(c, r1);
        c2_0.intoArray(c, r2);
        c3_0.intoArray(c, r3);
        c4_0.intoArray(c, r4);
        c5_0.intoArray(c, r5);
        c6_0.intoArray(c, r6);
        c7_0.intoArray(c, r7);
        c8_0.intoArray(c, r8);
        c9_0.intoArray(c, r9);
        c10_0.intoArray(c, r10);
        c11_0.intoArray(c, r11);
    }

    /** Rows a0 .. a0+3 of C (the rows a range has past its twelve-row tiles), two vectors of columns from b0, over k in [k0, k1). */
    private static void tile4x2(float[] a, int aOff, int aRow, int aCol, float[] b, int ldb, float[] c, int ldc,
                                int a0, int b0, int k0, int k1) {
        int lanes = LANES;
        int r0 = (a0 + 0) * ldc + b0;
        int r1 = (a0 + 1) * ldc + b0;
        int r2 = (a0 + 2) * ldc + b0;
        int r3 = (a0 + 3) * ldc + b0;
        FloatVector c0_0 = FloatVector.fromArray(F, c, r0);
        FloatVector c0_1 = FloatVector.fromArray(F, c, r0 + lanes);
        FloatVector c1_0 = FloatVector.fromArray(F, c, r1);
        FloatVector c1_1 = FloatVector.fromArray(F, c, r1 + lanes);
        FloatVector c2_0 = FloatVector.fromArray(F, c, r2);
        FloatVector c2_1 = FloatVector.fromArray(F, c, r2 + lanes);
        FloatVector c3_0 = FloatVector.fromArray(F, c, r3);
        FloatVector c3_1 = FloatVector.fromArray(F, c, r3 + lanes);
        int ar = aOff + a0 * aRow;
        for (int k = k0; k < k1; k++) {
            int bk = k * ldb + b0;
            FloatVector x0 = FloatVector.fromArray(F, b, bk);
            FloatVector x1 = FloatVector.fromArray(F, b, bk + lanes);
            int ak = ar + k * aCol;
            FloatVector m;
            m = FloatVector.broadcast(F, a[ak + 0 * aRow]);
            c0_0 = m.fma(x0, c0_0);
            c0_1 = m.fma(x1, c0_1);
            m = FloatVector.broadcast(F, a[ak + 1 * aRow]);
            c1_0 = m.fma(x0, c1_0);
            c1_1 = m.fma(x1, c1_1);
            m = FloatVector.broadcast(F, a[ak + 2 * aRow]);
            c2_0 = m.fma(x0, c2_0);
            c2_1 = m.fma(x1, c2_1);
            m = FloatVector.broadcast(F, a[ak + 3 * aRow]);
            c3_0 = m.fma(x0, c3_0);
            c3_1 = m.fma(x1, c3_1);
        }
        c0_0.intoArray(c, r0);
        c0_1.intoArray(c, r0 + lanes);
        c1_0.intoArray(c, r1);
        c1_1.intoArray(c, r1 + lanes);
        c2_0.intoArray(c, r2);
        c2_1.intoArray(c, r2 + lanes);
        c3_0.intoArray(c, r3);
        c3_1.intoArray(c, r3 + lanes);
    }
}
