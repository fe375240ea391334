package qlab.engine.tensor;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import qlab.engine.util.WorkerPool;

/** The vector kernels against their scalar references, and batched against single-token bitwise. */
class F32MatrixTest {

    private static float[] random(int n, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        float[] a = new float[n];
        for (int i = 0; i < n; i++) {
            a[i] = (float) r.nextGaussian();
        }
        return a;
    }

    @Test
    void vectorAgreesWithScalarAndBatchedEqualsSingleBitwise() {
        for (int cols : new int[] {1, 7, 17, 33, 64, 127, 896}) {
            for (int rows : new int[] {1, 3, 4, 9, 16}) {
                F32Matrix m = new F32Matrix(random(rows * cols, cols * 31L + rows), rows, cols);
                int tokens = 7;
                float[] x = random(tokens * cols, 99);
                float[] fast = new float[tokens * rows];
                float[] ref = new float[tokens * rows];
                m.matmul(x, null, tokens, fast, rows, 0, 0, rows);
                m.matmulScalar(x, tokens, ref, rows, 0, 0, rows);
                for (int i = 0; i < fast.length; i++) {
                    // float32 sums of `cols` products in a different order: error grows like sqrt(cols) ulps of the terms
                    assertTrue(Math.abs(fast[i] - ref[i]) <= 1e-5 * Math.sqrt(cols) * 4, cols + "x" + rows + ": " + fast[i] + " vs " + ref[i]);
                }
                for (int t = 0; t < tokens; t++) {
                    float[] one = new float[rows];
                    m.matmul(java.util.Arrays.copyOfRange(x, t * cols, (t + 1) * cols), null, 1, one, rows, 0, 0, rows);
                    assertArrayEquals(one, java.util.Arrays.copyOfRange(fast, t * rows, (t + 1) * rows), "token " + t);
                }
                // a sub-range of rows writes only its own cells
                float[] part = new float[tokens * rows];
                java.util.Arrays.fill(part, Float.NaN);
                m.matmul(x, null, tokens, part, rows, 0, rows / 2, rows);
                for (int t = 0; t < tokens; t++) {
                    for (int r = 0; r < rows; r++) {
                        float v = part[t * rows + r];
                        assertTrue(r < rows / 2 ? Float.isNaN(v) : v == fast[t * rows + r]);
                    }
                }
            }
        }
    }

    /**
     * From {@link F32Matrix#TILED_FROM_TOKENS} tokens the tile runs: each cell bitwise the scalar
     * fma fold ({@link TokenTile#cellScalar}), within the rounding bound of the exact product, and
     * the same bits whatever the row split; rows past a whole panel and tokens past a whole chunk
     * included.
     */
    @Test
    void tiledProductsEqualTheirScalarFoldWhateverTheRowSplit() {
        for (int cols : new int[] {1, 8, 33, 127, 896}) {
            for (int rows : new int[] {1, 6, 13}) {
                for (int tokens : new int[] {F32Matrix.TILED_FROM_TOKENS, F32Matrix.TILED_FROM_TOKENS + 5}) {
                    float[] w = random(rows * cols, cols * 7L + rows);
                    F32Matrix m = new F32Matrix(w, rows, cols);
                    float[] x = random(tokens * cols, tokens + cols);
                    Object prepared = m.prepare(x, tokens);
                    assertTrue(prepared instanceof TokenColumns || !VectorSupport.ENABLED);
                    assertEquals(VectorSupport.ENABLED ? TokenTile.panelRows(tokens) : Matrix.ROW_GRAIN, m.rowGrain(prepared),
                            "threads are handed whole panels");
                    int stride = rows + 2;
                    float[] y = new float[tokens * stride];
                    m.matmul(x, prepared, tokens, y, stride, 1, 0, rows);
                    float[] split = new float[tokens * stride];
                    m.matmul(x, prepared, tokens, split, stride, 1, 0, rows / 2);
                    m.matmul(x, prepared, tokens, split, stride, 1, rows / 2, rows);
                    TokenColumns columns = TokenColumns.of(x, 0, cols, tokens);
                    for (int t = 0; t < tokens; t++) {
                        for (int r = 0; r < rows; r++) {
                            float cell = y[t * stride + 1 + r];
                            double exact = 0;
                            double abs = 0;
                            for (int k = 0; k < cols; k++) {
                                exact += (double) w[r * cols + k] * x[t * cols + k];
                                abs += Math.abs((double) w[r * cols + k] * x[t * cols + k]);
                            }
                            String where = cols + " cols, " + rows + " rows, " + tokens + " tokens, cell " + r + "," + t;
                            assertTrue(Math.abs(cell - exact) <= cols * 0x1p-24 * abs + 1e-30, where + ": " + cell + " vs " + exact);
                            if (VectorSupport.ENABLED) {
                                assertEquals(Float.floatToIntBits(TokenTile.cellScalar(w, r * cols, columns, t)),
                                        Float.floatToIntBits(cell), where + " vs the scalar fold");
                            }
                            assertEquals(Float.floatToIntBits(cell), Float.floatToIntBits(split[t * stride + 1 + r]),
                                    where + " with another row split");
                        }
                    }
                }
            }
        }
    }

    /** Activations transposed by a pool's threads are the same; q, k and v (gate and up) share them. */
    @Test
    void preparedByThePoolAndSharedWithSiblings() {
        try (WorkerPool pool = new WorkerPool(2)) {
            int cols = 40;
            int tokens = 3 * TokenColumns.CHUNK + 5;
            F32Matrix m = new F32Matrix(random(9 * cols, 3), 9, cols);
            F32Matrix sibling = new F32Matrix(random(5 * cols, 4), 5, cols);
            float[] x = random(tokens * cols, 5);
            Object one = m.prepare(x, tokens);
            Object two = m.prepare(x, tokens, true, pool);
            float[] a = new float[tokens * 9];
            float[] b = new float[tokens * 9];
            m.matmul(x, one, tokens, a, 9, 0, 0, 9);
            m.matmul(x, two, tokens, b, 9, 0, 0, 9);
            assertArrayEquals(a, b);
            if (VectorSupport.ENABLED) {
                assertSame(two, sibling.prepareLike(two, x, tokens, true, pool));
                assertNotSame(two, new F32Matrix(random(5 * 8, 6), 5, 8).prepareLike(two, random(tokens * 8, 7), tokens, true, pool));
            }
        }
    }

    @Test
    void decodeKeepsTheVectorRowGrain() {
        F32Matrix m = new F32Matrix(random(64 * 8, 1), 64, 8);
        assertEquals(Matrix.ROW_GRAIN, m.rowGrain(m.prepare(random(8, 2), 1)));
    }

    @Test
    void dotAndAxpyAgreeWithScalar() {
        for (int n : new int[] {1, 5, 8, 16, 31, 64, 100}) {
            float[] a = random(n + 3, n);
            float[] b = random(n + 5, n + 1);
            assertTrue(Math.abs(FloatKernels.dot(a, 3, b, 5, n) - FloatKernels.dotScalar(a, 3, b, 5, n)) < 1e-5 * n);
            float[] y1 = random(n, 7);
            float[] y2 = y1.clone();
            FloatKernels.axpy(0.37f, a, 1, y1, 0, n);
            FloatKernels.axpyScalar(0.37f, a, 1, y2, 0, n);
            assertArrayEquals(y2, y1); // fma in both: identical
        }
    }

    /**
     * Attention's weighted sum of value rows, sums held in registers: bitwise the scalar fold and
     * zeroing then axpy row by row (what the attention did before), for widths of whole
     * four-vector groups, single vectors and a scalar tail, with rows strided inside a wider cache row.
     */
    @Test
    void weightedRowsIsBitwiseZeroThenAxpyPerRow() {
        for (int n : new int[] {1, 7, 16, 64, 80, 128, 131}) {
            for (int rows : new int[] {0, 1, 3, 40}) {
                int stride = n + 9;
                float[] x = random(rows * stride + 5, n * 31 + rows);
                float[] w = random(rows + 1, rows + 2);
                float[] fast = random(n + 4, 3);
                float[] scalar = fast.clone();
                float[] viaAxpy = fast.clone();
                FloatKernels.weightedRows(w, 0, rows, 0.77f, x, 5, stride, fast, 2, n);
                FloatKernels.weightedRowsScalar(w, 0, rows, 0.77f, x, 5, stride, scalar, 2, n);
                java.util.Arrays.fill(viaAxpy, 2, 2 + n, 0f);
                for (int j = 0; j < rows; j++) {
                    FloatKernels.axpy(w[j] * 0.77f, x, 5 + j * stride, viaAxpy, 2, n);
                }
                assertArrayEquals(scalar, fast, n + " wide, " + rows + " rows");
                assertArrayEquals(viaAxpy, fast, n + " wide, " + rows + " rows (axpy)");
            }
        }
    }

    @Test
    void vectorAndScalarExpAgreeBitwiseAndStayWithinFourUlpOfMathExp() {
        SplittableRandom r = new SplittableRandom(5);
        float[] x = new float[4096];
        for (int i = 0; i < x.length; i++) {
            x[i] = (float) (r.nextDouble() * 180 - 90);
        }
        x[0] = 0f;
        x[1] = -0f;
        x[2] = 88.0f;
        x[3] = -87.3f;
        float[] v = new float[x.length];
        for (int i = 0; i + VectorSupport.LANES <= x.length; i += VectorSupport.LANES) {
            VectorSupport.exp(jdk.incubator.vector.FloatVector.fromArray(VectorSupport.F, x, i)).intoArray(v, i);
        }
        for (int i = 0; i < x.length; i++) {
            float s = VectorSupport.exp(x[i]);
            assertTrue(Float.floatToIntBits(s) == Float.floatToIntBits(v[i]), "x=" + x[i] + ": " + s + " vs " + v[i]);
            float ref = (float) Math.exp(Math.min(Math.max(x[i], -87.3f), 88.0f));
            assertTrue(Math.abs(s - ref) <= 4 * Math.ulp(ref), "x=" + x[i] + ": " + s + " vs Math.exp " + ref);
        }
    }
}
