package qlab.quant;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import qlab.engine.QlabException;
import qlab.engine.tensor.Matrix;
import qlab.engine.tensor.TokenTile;
import qlab.engine.util.WorkerPool;
import qlab.quant.kernel.Int8Strips;

class QuantizedMatrixTest {
    private static final int ROWS = 67;
    private static final int COLS = 176;

    static Stream<QuantFormat> formats() {
        return Formats.allVariants().stream();
    }

    /** y laid out as the forward pass does: [tokens, yStride] with this matrix's rows at yOffset. */
    private static float[] run(QuantizedMatrix m, WorkerPool pool, float[] x, int tokens) {
        int yStride = ROWS + 5;
        int yOffset = 2;
        float[] y = new float[tokens * yStride];
        java.util.Arrays.fill(y, Float.NaN);
        Object prepared = m.prepare(x, tokens);
        pool.forRange(ROWS, 8, (start, end) -> m.matmul(x, prepared, tokens, y, yStride, yOffset, start, end));
        for (int t = 0; t < tokens; t++) {
            for (int i = 0; i < yStride; i++) {
                boolean mine = i >= yOffset && i < yOffset + ROWS;
                assertEquals(mine, !Float.isNaN(y[t * yStride + i]), "cell " + i + " of token " + t);
            }
        }
        return y;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("formats")
    void sameResultOnOneAndTwoThreads(QuantFormat format) {
        float[] w = RowCases.gaussian(ROWS * COLS, 5);
        try (WorkerPool one = new WorkerPool(1); WorkerPool two = new WorkerPool(2)) {
            QuantizedMatrix a = QuantizedMatrix.quantize(format, w, ROWS, COLS, null, one);
            QuantizedMatrix b = QuantizedMatrix.quantize(format, w, ROWS, COLS, null, two);
            assertArrayEquals(a.data().toArray(ValueLayout.JAVA_BYTE), b.data().toArray(ValueLayout.JAVA_BYTE),
                    "parallel quantization must be deterministic");
            assertEquals(ROWS * format.bytesPerRow(COLS), a.storageBytes());
            assertEquals(a.weights().kernelBytes(), a.byteSize());
            assertEquals(format.label(), a.format());
            for (boolean int8 : new boolean[] {false, true}) {
                QuantizedMatrix m = new QuantizedMatrix(format, a.data(), ROWS, COLS, int8);
                for (int tokens : new int[] {1, 5, QuantizedMatrix.TILED_FROM_TOKENS + 1}) {
                    float[] x = RowCases.gaussian(tokens * COLS, 77 + tokens);
                    float[] y1 = run(m, one, x, tokens);
                    float[] y2 = run(m, two, x, tokens);
                    assertArrayEquals(y1, y2, format + " int8=" + int8 + " tokens=" + tokens);
                    // Batched (tokens > 1) and single-row products agree bitwise token by token;
                    // from TILED_FROM_TOKENS tokens integer formats run the tiled kernel, which
                    // agrees bitwise with itself run on one token, and with the single-row kernel
                    // within rounding (FormatKernelTest bounds both).
                    if (tokens > 1) {
                        for (int t = 0; t < tokens; t++) {
                            float[] xt = java.util.Arrays.copyOfRange(x, t * COLS, (t + 1) * COLS);
                            float[] single = run(m, two, xt, 1);
                            float[] tiledOne = new float[ROWS];
                            m.weights().dotBatchRowsTiled(0, ROWS, xt, 0, 1, tiledOne, 0, ROWS);
                            float[] wr = new float[COLS];
                            for (int r = 0; r < ROWS; r++) {
                                float batched = y1[t * (ROWS + 5) + 2 + r];
                                String where = format + " int8=" + int8 + " token " + t + " row " + r;
                                if (m.tiles(tokens)) {
                                    assertEquals(Float.floatToIntBits(tiledOne[r]), Float.floatToIntBits(batched), where);
                                    // Two f32 folds of the same products in different orders: each within
                                    // (n + 2) ulp-units of Σ|w·x| of the exact sum (FormatKernelTest's bound).
                                    a.copyRow(r, wr, 0);
                                    double abs = 0;
                                    for (int k = 0; k < COLS; k++) {
                                        abs += Math.abs((double) wr[k] * xt[k]);
                                    }
                                    double bound = 2 * ((COLS + 2) * 0x1p-23 * abs + COLS * 0x1p-147);
                                    assertEquals(single[2 + r], batched, bound, where);
                                } else {
                                    assertEquals(Float.floatToIntBits(single[2 + r]), Float.floatToIntBits(batched), where);
                                }
                            }
                        }
                    }
                }
            }
            float[] row = new float[COLS + 3];
            float[] expected = new float[COLS];
            for (int r : new int[] {0, ROWS / 2, ROWS - 1}) {
                a.copyRow(r, row, 3);
                format.dequantizeRow(a.data(), r * format.bytesPerRow(COLS), COLS, expected, 0);
                assertArrayEquals(expected, java.util.Arrays.copyOfRange(row, 3, COLS + 3));
            }
        }
    }

    /**
     * With int8 activations a prompt (one sequence's tokens) from {@link
     * QuantizedMatrix#TILED_FROM_TOKENS} on runs the dequantized tile on the activations rounded to
     * their int8 codes: every cell is bitwise the tile's own fold of that token's rounded row, the
     * same on one and two threads, and within rounding of the int8 strips' exact integer product.
     * Shorter prompts, and batches of sequences of any size, keep the strips.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("formats")
    void int8PromptsRunTheTileOnTheRoundedActivations(QuantFormat format) {
        float[] w = RowCases.gaussian(ROWS * COLS, 9);
        try (WorkerPool one = new WorkerPool(1); WorkerPool two = new WorkerPool(2)) {
            QuantizedMatrix q = QuantizedMatrix.quantize(format, w, ROWS, COLS, null, one);
            QuantizedMatrix m = new QuantizedMatrix(format, q.data(), ROWS, COLS, true);
            int tokens = QuantizedMatrix.TILED_FROM_TOKENS + 3;
            float[] x = RowCases.gaussian(tokens * COLS, 41);
            if (!m.usesInt8Activations()) {
                assertEquals(m.tiles(tokens), m.tiles(tokens, true), format + ": no int8 path, prompts as batches");
                return;
            }
            assertEquals(m.weights().tilesBatches(), m.tiles(tokens, true), format.label());
            assertTrue(!m.tiles(tokens, false) && !m.tiles(QuantizedMatrix.TILED_FROM_TOKENS - 1, true),
                    "batches and short prompts keep the strips");
            if (!m.tiles(tokens, true)) {
                return;
            }
            float[] y1 = new float[tokens * ROWS];
            float[] y2 = new float[tokens * ROWS];
            Object p1 = m.prepare(x, tokens, true);
            one.forRange(ROWS, 8, (s, e) -> m.matmul(x, p1, tokens, y1, ROWS, 0, s, e));
            Object p2 = m.prepare(x, tokens, true);
            two.forRange(ROWS, 8, (s, e) -> m.matmul(x, p2, tokens, y2, ROWS, 0, s, e));
            assertArrayEquals(y1, y2, format + ": one and two threads");
            Int8Activations a = Int8Activations.quantize(x, 0, COLS, tokens, m.weights().activationBlock());
            float[] strips = product(m, x, m.prepare(x, tokens, false), tokens);
            for (int t = 0; t < tokens; t++) {
                float[] rounded = new float[COLS];
                a.dequantize(t, rounded, 0);
                float[] tiledOne = new float[ROWS];
                m.weights().dotBatchRowsTiled(0, ROWS, rounded, 0, 1, tiledOne, 0, ROWS);
                for (int r = 0; r < ROWS; r++) {
                    String where = format + " token " + t + " row " + r;
                    assertEquals(Float.floatToIntBits(tiledOne[r]), Float.floatToIntBits(y1[t * ROWS + r]), where);
                    double bound = 0;
                    float[] row = new float[COLS];
                    m.copyRow(r, row, 0);
                    for (int j = 0; j < COLS; j++) {
                        bound += Math.abs((double) row[j] * rounded[j]);
                    }
                    bound *= (COLS + 2) * 0x1p-23;
                    assertEquals(strips[t * ROWS + r], y1[t * ROWS + r], bound, where + " vs the int8 strips");
                }
            }
        }
    }

    /**
     * q, k and v (gate and up) share one preparation of their common input when it is the one each
     * would make: int8 activations quantized in the same blocks, whatever the weight format, or the
     * same transposed tokens. A matrix with another activation block, or another width, makes its
     * own. Shared or not, every product is bitwise what its own preparation gives.
     */
    @Test
    void siblingsSharePreparationOnlyWhenItIsTheirs() {
        try (WorkerPool pool = new WorkerPool(2)) {
            for (boolean int8 : new boolean[] {false, true}) {
                QuantizedMatrix q8 = matrix("q8_0", 32, COLS, int8, pool);
                QuantizedMatrix q4 = matrix("q4_0", 32, COLS, int8, pool);
                QuantizedMatrix q4g128 = matrix("q4_0", 128, COLS, int8, pool);
                QuantizedMatrix narrow = matrix("q4_0", 32, COLS - 32, int8, pool);
                for (int tokens : new int[] {1, 3, QuantizedMatrix.TILED_FROM_TOKENS + 1}) {
                    float[] x = RowCases.gaussian(tokens * COLS, 11 + tokens);
                    Object first = q8.prepare(x, tokens);
                    Object shared = q4.prepareLike(first, x, tokens);
                    boolean prepares = int8 || q4.tiles(tokens);
                    assertTrue(prepares ? shared == first : shared == null, "int8=" + int8 + " tokens=" + tokens);
                    assertArrayEquals(product(q4, x, q4.prepare(x, tokens), tokens), product(q4, x, shared, tokens));
                    Object own = q4g128.prepareLike(first, x, tokens);
                    assertTrue(!int8 || own != first, "a 128-value activation block is not a 32-value one");
                    assertArrayEquals(product(q4g128, x, q4g128.prepare(x, tokens), tokens), product(q4g128, x, own, tokens));
                    float[] xn = RowCases.gaussian(tokens * (COLS - 32), 5);
                    Object narrowOwn = narrow.prepareLike(first, xn, tokens);
                    assertTrue(!prepares || narrowOwn != first, "other width");
                    assertArrayEquals(product(narrow, xn, narrow.prepare(xn, tokens), tokens), product(narrow, xn, narrowOwn, tokens));
                // a prompt: with int8 activations from TILED_FROM_TOKENS on, its rounded activations
                Object firstPrompt = q8.prepare(x, tokens, true);
                Object sharedPrompt = q4.prepareLike(firstPrompt, x, tokens, true);
                boolean preparesPrompt = int8 || q4.tiles(tokens, true);
                assertTrue(preparesPrompt ? sharedPrompt == firstPrompt : sharedPrompt == null, "prompt int8=" + int8 + " tokens=" + tokens);
                assertArrayEquals(product(q4, x, q4.prepare(x, tokens, true), tokens), product(q4, x, sharedPrompt, tokens));
                Object ownPrompt = q4g128.prepareLike(firstPrompt, x, tokens, true);
                assertTrue(!int8 || ownPrompt != firstPrompt, "prompt: a 128-value activation block is not a 32-value one");
                assertArrayEquals(product(q4g128, x, q4g128.prepare(x, tokens, true), tokens), product(q4g128, x, ownPrompt, tokens));
                // a prompt's preparation is never a batch's, nor the other way round
                if (int8 && q4.tiles(tokens, true)) {
                    assertTrue(q4.prepareLike(first, x, tokens, true) != first && q4.prepareLike(firstPrompt, x, tokens, false) != firstPrompt);
                }
                }
            }
        }
    }

    /**
     * The bytes a product reads, which bench divides by the read bandwidth: with int8 activations
     * the strips (every level of 1, 2 or 4 bits in a nibble; fp16 scales in 2 bytes, others in 4)
     * plus the scalar rows outside whole strips, so a 2-bit format streams as much as a 4-bit one there.
     */
    @Test
    void int8ProductsCountTheBytesOfTheStripsTheyStream() {
        int rows = Int8Strips.ROWS + 8; // one strip and 8 scalar rows
        int cols = 256;
        try (WorkerPool pool = new WorkerPool(1)) {
            for (String name : new String[] {"q8_0", "q4_0", "q2_0", "b1_0", "q4_8"}) {
                QuantFormat f = Formats.byName(name, name.equals("q4_8") ? 128 : 32);
                int block = name.equals("q4_8") ? 128 : 32;
                int scaleBytes = name.equals("q4_8") ? 4 : 2; // q4_8's scales are f32 row base × u8
                QuantizedMatrix m = QuantizedMatrix.quantize(f, RowCases.gaussian(rows * cols, 3), rows, cols, null, pool);
                QuantizedMatrix f32Acts = new QuantizedMatrix(f, m.data(), rows, cols, false);
                QuantizedMatrix int8Acts = new QuantizedMatrix(f, m.data(), rows, cols, true);
                long perRowF32 = f32Acts.byteSize() / rows;
                assertEquals(m.weights().kernelBytes(), f32Acts.byteSize(), name);
                if (PackedWeights.VECTOR_ENABLED) {
                    long stripRow = (name.equals("q8_0") ? cols : cols / 2) + (long) scaleBytes * (cols / block);
                    assertEquals(Int8Strips.ROWS * stripRow + 8 * perRowF32, int8Acts.byteSize(), name);
                } else {
                    assertEquals(f32Acts.byteSize(), int8Acts.byteSize(), name + ": no strips without the vector kernels");
                }
            }
        }
    }

    /**
     * Threads are handed whole tile panels where a product goes through the tile (a prompt, or a
     * batch with f32 activations, from {@link QuantizedMatrix#TILED_FROM_TOKENS} tokens), whole
     * strips elsewhere; cut on that grain over two threads, the product is the one-range product,
     * and so is the product of activations prepared by the pool's threads.
     */
    @Test
    void threadsAreHandedWholePanelsOfTheTile() {
        try (WorkerPool pool = new WorkerPool(2)) {
            for (boolean int8 : new boolean[] {false, true}) {
                QuantizedMatrix m = matrix("q8_0", 32, COLS, int8, pool);
                for (int tokens : new int[] {1, 3, QuantizedMatrix.TILED_FROM_TOKENS, 64}) {
                    for (boolean prompt : new boolean[] {false, true}) {
                        float[] x = RowCases.gaussian(tokens * COLS, 3 + tokens);
                        Object prepared = m.prepare(x, tokens, prompt);
                        int grain = m.rowGrain(prepared);
                        String where = "int8=" + int8 + " tokens=" + tokens + " prompt=" + prompt;
                        assertEquals(m.tiles(tokens, prompt) ? TokenTile.panelRows(tokens) : Matrix.ROW_GRAIN, grain, where);
                        float[] y = new float[tokens * ROWS];
                        pool.forRange(ROWS, grain, (s, e) -> m.matmul(x, prepared, tokens, y, ROWS, 0, s, e));
                        assertArrayEquals(product(m, x, prepared, tokens), y, where);
                        Object shared = m.prepare(x, tokens, prompt, pool);
                        assertEquals(grain, m.rowGrain(shared), where);
                        assertArrayEquals(y, product(m, x, shared, tokens), where + ": prepared by the pool's threads");
                        assertTrue(m.prepareLike(shared, x, tokens, prompt, pool) == shared, where + ": shared with a sibling");
                    }
                }
            }
        }
    }

    private static QuantizedMatrix matrix(String format, int group, int cols, boolean int8, WorkerPool pool) {
        QuantFormat f = Formats.byName(format, group);
        QuantizedMatrix m = QuantizedMatrix.quantize(f, RowCases.gaussian(ROWS * cols, cols), ROWS, cols, null, pool);
        return new QuantizedMatrix(f, m.data(), ROWS, cols, int8);
    }

    private static float[] product(QuantizedMatrix m, float[] x, Object prepared, int tokens) {
        float[] y = new float[tokens * ROWS];
        m.matmul(x, prepared, tokens, y, ROWS, 0, 0, ROWS);
        return y;
    }

    /**
     * The importance of column j must weigh column j itself, not the value at j's position
     * inside block 0: weighting column 139 (block 4, position 11) must shrink that column's
     * error and leave column 11 (block 0, same position) without that gain.
     */
    @ParameterizedTest
    @ValueSource(strings = {"q4_0", "q2_0", "q2_8", "tq2_8"})
    void importanceIsIndexedByColumn(String name) {
        int weightedColumn = 4 * 32 + 11;
        float[] w = RowCases.gaussian(ROWS * COLS, 10);
        float[] importance = new float[COLS];
        java.util.Arrays.fill(importance, 1f);
        importance[weightedColumn] = 1000f;
        try (WorkerPool pool = new WorkerPool(2)) {
            QuantFormat f = Formats.byName(name);
            QuantizedMatrix plain = QuantizedMatrix.quantize(f, w, ROWS, COLS, null, pool);
            QuantizedMatrix weighted = QuantizedMatrix.quantize(f, w, ROWS, COLS, importance, pool);
            float[] p = new float[COLS];
            float[] q = new float[COLS];
            double[] errPlain = new double[2];
            double[] errWeighted = new double[2];
            int[] columns = {weightedColumn, 11};
            for (int r = 0; r < ROWS; r++) {
                plain.copyRow(r, p, 0);
                weighted.copyRow(r, q, 0);
                for (int i = 0; i < 2; i++) {
                    errPlain[i] += Math.pow(w[r * COLS + columns[i]] - p[columns[i]], 2);
                    errWeighted[i] += Math.pow(w[r * COLS + columns[i]] - q[columns[i]], 2);
                }
            }
            assertTrue(errWeighted[0] < errPlain[0] / 4, name + ": column " + weightedColumn + " error " + errWeighted[0] + " vs plain " + errPlain[0]);
            // Column 11 shares no group with the weighted column (the two-level formats' row base
            // may still move a little), so it must not get the weighted column's gain.
            assertTrue(errWeighted[1] > 0.8 * errPlain[1], name + ": column 11 error " + errWeighted[1] + " vs plain " + errPlain[1]);
        }
    }

    @Test
    void importanceReachesEveryRow() {
        float[] w = RowCases.gaussian(ROWS * COLS, 9);
        float[] importance = new float[COLS];
        java.util.Arrays.fill(importance, 1f);
        importance[3] = 1000f;
        try (WorkerPool pool = new WorkerPool(2)) {
            QuantFormat f = Formats.byName("q4_0");
            QuantizedMatrix plain = QuantizedMatrix.quantize(f, w, ROWS, COLS, null, pool);
            QuantizedMatrix weighted = QuantizedMatrix.quantize(f, w, ROWS, COLS, importance, pool);
            float[] p = new float[COLS];
            float[] q = new float[COLS];
            double errPlain = 0;
            double errWeighted = 0;
            for (int r = 0; r < ROWS; r++) {
                plain.copyRow(r, p, 0);
                weighted.copyRow(r, q, 0);
                errPlain += Math.pow(w[r * COLS + 3] - p[3], 2);
                errWeighted += Math.pow(w[r * COLS + 3] - q[3], 2);
            }
            assertTrue(errWeighted < errPlain / 4, "channel 3 error " + errWeighted + " vs plain " + errPlain);
        }
    }

    @Test
    void badInputIsAOneLineQlabException() {
        QuantFormat f = Formats.byName("q8_0");
        MemorySegment small = Arena.ofAuto().allocate(10);
        QlabException e = assertThrows(QlabException.class, () -> new QuantizedMatrix(f, small, 4, 32));
        assertEquals("quantized matrix: data holds 10 bytes, q8_0 [4, 32] needs 136", e.getMessage());
        try (WorkerPool pool = new WorkerPool(1)) {
            float[] w = new float[64];
            w[37] = Float.NaN;
            QlabException nan = assertThrows(QlabException.class, () -> QuantizedMatrix.quantize(f, w, 2, 32, null, pool));
            assertEquals("quantize: weight [1, 5] is NaN; only finite weights can be quantized", nan.getMessage());
            assertThrows(QlabException.class, () -> QuantizedMatrix.quantize(f, new float[63], 2, 32, null, pool));
            assertThrows(QlabException.class, () -> QuantizedMatrix.quantize(f, new float[64], 2, 32, new float[31], pool));
            float[] negative = new float[32];
            negative[4] = -1f;
            QlabException imp = assertThrows(QlabException.class, () -> QuantizedMatrix.quantize(f, new float[64], 2, 32, negative, pool));
            assertEquals("quantize: importance of column 4 is -1.0; importance weights must be finite and non-negative", imp.getMessage());
        }
    }

    @Test
    void theBatchedPropertyNamesTheTileThreshold() {
        assertEquals(QuantizedMatrix.TILED_FROM_TOKENS, QuantizedMatrix.tiledFrom("auto"));
        assertEquals(2, QuantizedMatrix.tiledFrom("tiled"));
        assertEquals(Integer.MAX_VALUE, QuantizedMatrix.tiledFrom("exact"));
        assertEquals(12, QuantizedMatrix.tiledFrom("12"));
        for (String bad : new String[] {"0", "-3", "eight", "", "12345678901"}) {
            QlabException e = assertThrows(QlabException.class, () -> QuantizedMatrix.tiledFrom(bad), bad);
            assertTrue(e.getMessage().contains("qlab.quant.batched"), e.getMessage());
        }
    }
}
