package qlab.quant;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import qlab.engine.tensor.TokenColumns;
import qlab.engine.tensor.TokenTile;
import qlab.engine.tensor.VectorSupport;

/**
 * Every kernel of every registered format (at every group size) against dequantize-then-dot in
 * double, on Gaussian and adversarial rows, odd widths, unaligned weight data and activation offsets.
 *
 * <p>Tolerance: every kernel computes the same n products (weight × activation, the weight being
 * scale × level) in float and differs from the reference only in rounding and association (FMA
 * lanes, one scale multiply per block instead of per weight, lane sums, the double reference).
 * Each such sum has |error| ≤ γ_{n+2} Σ|w_j x_j|, γ_k = k·u/(1 − k·u), u = 2^-24; we allow
 * twice that, (n + 2)·2^-23 Σ|w_j x_j|, plus n·2^-147 for products and partial sums that fall in
 * the subnormal range, where the relative bound does not hold. The int8 path multiplies each
 * block's exact integer sum by (weight scale × activation scale); when that product is subnormal
 * it carries an absolute error up to 2^-150, so there we add 2^-149 × Σ|level × code| ≤
 * 2^-149 × 127 × Σ|code|.
 */
class FormatKernelTest {
    private static final int[] WIDTHS = {1, 8, 17, 32, 33, 64, 127, 176, 896, 1023};
    private static final int ROWS = 3;
    private static final int TOKENS = 6; // one 4-token tile and a remainder of 2
    private static final int X_OFFSET = 5;

    static Stream<QuantFormat> formats() {
        return Formats.allVariants().stream();
    }

    /**
     * The magnitude of weight j in the kernels' sums: |w| itself, except in the affine formats
     * (q4_1, q5_1, and the k-quants with mins), whose kernels add scale × Σ level·x and min × Σ x,
     * terms that can each be larger than the weight (they cancel). There the quantizer's min is
     * about its block's minimum (q4_1, q5_1: one of the block's dequantized values; the k-quants:
     * a sub-block's minimum on the superblock's grid of mins), so |min| and |scale × level| are at
     * most about the block's (superblock's) largest |w| and twice it.
     */
    private static double kernelMagnitude(QuantFormat format, float[] deq, int j) {
        if (!(format instanceof qlab.quant.format.BlockCodeFormat b && b.hasMins()
                || format instanceof qlab.quant.format.SuperBlockFormat k && k.hasMins())) {
            return deq[j];
        }
        int start = j / format.groupSize() * format.groupSize();
        double max = 0;
        for (int i = start; i < Math.min(deq.length, start + format.groupSize()); i++) {
            max = Math.max(max, Math.abs(deq[i]));
        }
        return Math.abs(deq[j]) + 3 * max;
    }

    private static double tolerance(int n, double absSum) {
        return (n + 2) * 0x1p-23 * absSum + n * 0x1p-147;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("formats")
    void kernelsAgreeWithDequantizedDot(QuantFormat format) {
        int checks = 0;
        double worstRatio = 0;
        for (int cols : WIDTHS) {
            for (RowCases kind : RowCases.values()) {
                float[][] rows = new float[ROWS][];
                for (int r = 0; r < ROWS; r++) {
                    rows[r] = kind.row(cols, 1000L * cols + 10L * kind.ordinal() + r);
                }
                MemorySegment data = RowCases.quantize(format, rows, cols, null, 3);
                PackedWeights w = format.pack(data, ROWS, cols);

                // Token 0 is all zeros (an activation block scale of 0), token 1 has one huge
                // activation, the rest are Gaussian.
                float[] xs = RowCases.gaussian(X_OFFSET + TOKENS * cols + 7, cols * 31L + kind.ordinal());
                java.util.Arrays.fill(xs, X_OFFSET, X_OFFSET + cols, 0f);
                xs[X_OFFSET + cols + cols / 2] = 3e4f;
                Int8Activations a = w.hasInt8Path()
                        ? Int8Activations.quantize(xs, X_OFFSET, cols, TOKENS, w.activationBlock()) : null;

                float[] deq = new float[cols];
                float[] packedDeq = new float[cols];
                float[] aDeq = new float[cols];
                for (int r = 0; r < ROWS; r++) {
                    format.dequantizeRow(data, r * format.bytesPerRow(cols), cols, deq, 0);
                    w.dequantizeRow(r, packedDeq, 0);
                    assertArrayEquals(deq, packedDeq, format + ": packed dequantize differs from stored, width " + cols);

                    float[] rowsAtOnce = new float[1 + ROWS * TOKENS];
                    w.dotBatchRowsVector(0, ROWS, xs, X_OFFSET, TOKENS, rowsAtOnce, 1, ROWS);
                    float[] batch = new float[TOKENS * 2];
                    w.dotBatchVector(r, xs, X_OFFSET, TOKENS, batch, 1, 2);
                    float[] batchInt8 = new float[TOKENS * 2];
                    if (a != null) {
                        w.dotInt8BatchVector(r, a, batchInt8, 1, 2);
                    }
                    for (int t = 0; t < TOKENS; t++) {
                        int xo = X_OFFSET + t * cols;
                        double ref = 0;
                        double abs = 0;
                        for (int j = 0; j < cols; j++) {
                            ref += (double) deq[j] * xs[xo + j];
                            abs += Math.abs(kernelMagnitude(format, deq, j) * xs[xo + j]);
                        }
                        double tol = tolerance(cols, abs);
                        String where = format + " " + kind + " width " + cols + " row " + r + " token " + t;
                        float scalar = w.dotScalar(r, xs, xo);
                        float vector = w.dotVector(r, xs, xo);
                        assertEquals(ref, scalar, tol, where + " scalar");
                        assertEquals(ref, vector, tol, where + " vector");
                        worstRatio = Math.max(worstRatio, Math.abs(vector - ref) / Math.max(tol, Double.MIN_VALUE));
                        assertEquals(Float.floatToIntBits(vector), Float.floatToIntBits(batch[1 + 2 * t]),
                                where + " batched must equal single-row bitwise");
                        assertEquals(Float.floatToIntBits(vector), Float.floatToIntBits(rowsAtOnce[1 + r + t * ROWS]),
                                where + " batched rows must equal single-row bitwise");
                        checks += 4;
                        if (a == null) {
                            continue;
                        }
                        a.dequantize(t, aDeq, 0);
                        double refInt8 = 0;
                        double absInt8 = 0;
                        double activationBound = 0;
                        double codeSum = 0;
                        for (int j = 0; j < cols; j++) {
                            refInt8 += (double) deq[j] * aDeq[j];
                            absInt8 += Math.abs(kernelMagnitude(format, deq, j) * aDeq[j]);
                            // |x − x̂| ≤ half an activation step per value.
                            activationBound += Math.abs((double) deq[j]) * a.scales()[t * a.blocksPerRow() + j / a.block()] / 2;
                            codeSum += Math.abs(a.codes()[t * cols + j]);
                        }
                        double tolInt8 = tolerance(cols, absInt8) + 0x1p-149 * 127 * codeSum;
                        float int8Scalar = w.dotInt8Scalar(r, a, t);
                        float int8Vector = w.dotInt8Vector(r, a, t);
                        assertEquals(refInt8, int8Scalar, tolInt8, where + " int8 scalar");
                        assertEquals(refInt8, int8Vector, tolInt8, where + " int8 vector");
                        assertEquals(ref, refInt8, activationBound + tol + tolInt8, where + " int8 path vs f32 activations");
                        assertEquals(Float.floatToIntBits(int8Vector), Float.floatToIntBits(batchInt8[1 + 2 * t]),
                                where + " int8 batched must equal single-row bitwise");
                        checks += 4;
                    }
                }
            }
        }
        // 4 per row and token (scalar, vector, batched, batched rows), 4 more with the int8 path.
        int perCell = format.isInteger() ? 8 : 4;
        assertEquals(WIDTHS.length * RowCases.values().length * ROWS * TOKENS * perCell, checks, format + ": checks run");
        System.out.printf("%-12s %6d kernel checks, worst vector error %.3f of tolerance%n", format.label(), checks, worstRatio);
    }

    /**
     * The dequantized-tile batched kernel: within the same bound of the exact product, bitwise its
     * scalar reference, and each cell the same bits whatever the batch (all tokens at once, or one
     * at a time) and the row split (a 6-row panel, or a single row and a short panel).
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("formats")
    void tiledBatchesAgreeWithDequantizedDotWhateverTheBatch(QuantFormat format) {
        int rowsN = 8; // a full panel and a short one
        int tokens = TokenColumns.CHUNK + 3; // a two-vector chunk and a one-vector chunk
        if (VectorSupport.FORCED_LANES != 0) {
            // The kernels-8-lanes and kernels-16-lanes runs (quant/pom.xml): the tile at that width too.
            assertEquals(VectorSupport.FORCED_LANES, VectorSupport.LANES, "the tile's lanes");
            assertEquals(VectorSupport.FORCED_LANES, qlab.quant.kernel.Lanes.COUNT, "the block kernels' lanes");
        }
        int checks = 0;
        int[] widths = {1, 8, 33, 127, 896};
        for (int cols : widths) {
            for (RowCases kind : RowCases.values()) {
                float[][] rows = new float[rowsN][];
                for (int r = 0; r < rowsN; r++) {
                    rows[r] = kind.row(cols, 7000L * cols + 10L * kind.ordinal() + r);
                }
                MemorySegment data = RowCases.quantize(format, rows, cols, null, 3);
                PackedWeights w = format.pack(data, rowsN, cols);
                float[] xs = RowCases.gaussian(X_OFFSET + tokens * cols + 3, cols * 17L + kind.ordinal());

                float[] all = new float[2 + rowsN * tokens];
                w.dotBatchRowsTiled(0, rowsN, xs, X_OFFSET, tokens, all, 2, rowsN);
                float[] shifted = new float[2 + rowsN * tokens];
                w.dotBatchRowsTiled(0, 1, xs, X_OFFSET, tokens, shifted, 2, rowsN);
                w.dotBatchRowsTiled(1, rowsN, xs, X_OFFSET, tokens, shifted, 2, rowsN);
                TokenColumns columns = TokenColumns.of(xs, X_OFFSET, cols, tokens);
                float[] deq = new float[cols];
                float[] deqVector = new float[cols + 4];
                for (int r = 0; r < rowsN; r++) {
                    w.dequantizeRow(r, deq, 0);
                    w.dequantizeRowVector(r, deqVector, 4);
                    for (int j = 0; j < cols; j++) {
                        assertEquals(Float.floatToIntBits(deq[j]), Float.floatToIntBits(deqVector[4 + j]),
                                format + " width " + cols + " row " + r + " column " + j + ": vector dequantize");
                    }
                    for (int t = 0; t < tokens; t++) {
                        int xo = X_OFFSET + t * cols;
                        double ref = 0;
                        double abs = 0;
                        for (int j = 0; j < cols; j++) {
                            ref += (double) deq[j] * xs[xo + j];
                            abs += Math.abs(kernelMagnitude(format, deq, j) * xs[xo + j]);
                        }
                        String where = format + " " + kind + " width " + cols + " row " + r + " token " + t;
                        float cell = all[2 + r + t * rowsN];
                        assertEquals(ref, cell, tolerance(cols, abs), where + " tiled");
                        assertEquals(Float.floatToIntBits(TokenTile.cellScalar(deq, 0, columns, t)),
                                Float.floatToIntBits(cell), where + " tiled vs its scalar reference");
                        float[] one = new float[rowsN];
                        w.dotBatchRowsTiled(0, rowsN, xs, xo, 1, one, 0, rowsN);
                        assertEquals(Float.floatToIntBits(cell), Float.floatToIntBits(one[r]), where + " tiled, one token");
                        assertEquals(Float.floatToIntBits(cell), Float.floatToIntBits(shifted[2 + r + t * rowsN]),
                                where + " tiled, other row split");
                        checks += 3;
                    }
                }
            }
        }
        assertEquals(widths.length * RowCases.values().length * rowsN * tokens * 3, checks, format + ": checks run");
    }
    /**
     * The int8-activation row kernel ({@link qlab.quant.kernel.Int8Strips}: 16- or 32-row strips, rows in
     * the lanes, 16-bit sums): bitwise the scalar reference for every row and token, whatever the
     * row split, with rows outside whole strips, widths with a partial last block or none whole,
     * and the extremes of the 16-bit sums (every level at the grid's end times activation codes
     * of ±127).
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("int8Formats")
    void int8RowKernelEqualsTheScalarReferenceBitwise(QuantFormat format) {
        int rowsN = 2 * qlab.quant.kernel.Int8Strips.ROWS + 5;
        int tokens = 5;
        int checks = 0;
        int[] widths = {1, 33, 64, 127, 256, 896, 1023};
        for (int cols : widths) {
            for (RowCases kind : RowCases.values()) {
                float[][] rows = new float[rowsN][];
                for (int r = 0; r < rowsN; r++) {
                    rows[r] = kind.row(cols, 9000L * cols + 10L * kind.ordinal() + r);
                }
                // Rows whose levels sit at one end of the grid: constant rows of either sign.
                java.util.Arrays.fill(rows[3], -0.75f);
                java.util.Arrays.fill(rows[20], 0.5f);
                MemorySegment data = RowCases.quantize(format, rows, cols, null, 1);
                PackedWeights w = format.pack(data, rowsN, cols);
                w.prepareInt8Rows();
                if (PackedWeights.VECTOR_ENABLED && w instanceof qlab.quant.kernel.BlockCodeWeights b) {
                    assertEquals(2 * qlab.quant.kernel.Int8Strips.ROWS, b.int8StripRows(), format + ": rows in strips");
                }
                if (PackedWeights.VECTOR_ENABLED && w instanceof qlab.quant.kernel.SubBlockWeights b) {
                    assertEquals(2 * qlab.quant.kernel.Int8Strips.ROWS, b.int8StripRows(), format + ": rows in strips");
                }
                float[] xs = RowCases.gaussian(tokens * cols, cols * 23L + kind.ordinal());
                java.util.Arrays.fill(xs, 0, cols, 2.5f);           // every code +127
                java.util.Arrays.fill(xs, cols, 2 * cols, -1e-3f);  // every code -127
                java.util.Arrays.fill(xs, 2 * cols, 3 * cols, 0f);  // a zero activation scale
                qlab.quant.kernel.Int8Strips.Activations a = new qlab.quant.kernel.Int8Strips.Activations(
                        Int8Activations.quantize(xs, 0, cols, tokens, w.activationBlock()));
                float[] all = new float[3 + rowsN * tokens];
                w.dotInt8Rows(0, rowsN, a, all, 3, rowsN);
                float[] split = new float[3 + rowsN * tokens];
                w.dotInt8Rows(0, 7, a, split, 3, rowsN);
                w.dotInt8Rows(7, 23, a, split, 3, rowsN);
                w.dotInt8Rows(23, rowsN, a, split, 3, rowsN);
                for (int r = 0; r < rowsN; r++) {
                    for (int t = 0; t < tokens; t++) {
                        String where = format + " " + kind + " width " + cols + " row " + r + " token " + t;
                        int expected = Float.floatToIntBits(w.dotInt8Scalar(r, a.codes(), t));
                        assertEquals(expected, Float.floatToIntBits(all[3 + r + t * rowsN]), where + " int8 rows");
                        assertEquals(expected, Float.floatToIntBits(split[3 + r + t * rowsN]), where + " int8 rows, other split");
                        checks += 2;
                    }
                }
            }
        }
        assertEquals(widths.length * RowCases.values().length * rowsN * tokens * 2, checks, format + ": checks run");
    }

    /** The formats with int8-activation kernels: every integer format, and no float format. */
    static Stream<QuantFormat> int8Formats() {
        return formats().filter(f -> f.pack(RowCases.quantize(f, new float[][] {new float[32]}, 32, null, 1), 1, 32)
                .hasInt8Path());
    }

    @org.junit.jupiter.api.Test
    void theInt8TestCoversEveryIntegerFormat() {
        List<String> int8 = int8Formats().map(QuantFormat::label).toList();
        List<String> integer = formats().filter(QuantFormat::isInteger).map(QuantFormat::label).toList();
        assertFalse(integer.isEmpty());
        assertEquals(integer, int8);
    }

    /**
     * Wide rows, where a batch's strips are taken a few at a time over all its tokens (as many as
     * fit the cache budget with one token's codes: with 32-row strips of 4864 columns, three 4-bit
     * strips or one 8-bit):
     * still bitwise the scalar reference for every row and token, whatever the row split.
     */
    @ParameterizedTest(name = "{0}")
    @org.junit.jupiter.params.provider.ValueSource(strings = {"q4_0", "q8_0", "q2_8", "q4_1", "q5_0", "q5_1", "q2_k", "q3_k", "q4_k",
        "q5_k", "q6_k"})
    void int8StripsInGroupsOverTheTokensEqualTheScalarReference(String name) {
        QuantFormat format = Formats.byName(name);
        int strips = 5;
        int rowsN = strips * qlab.quant.kernel.Int8Strips.ROWS + 3;
        int cols = 4864;
        int tokens = 3;
        float[][] rows = new float[rowsN][];
        for (int r = 0; r < rowsN; r++) {
            rows[r] = RowCases.gaussian(cols, 31L * r + 7);
        }
        PackedWeights w = format.pack(RowCases.quantize(format, rows, cols, null, 0), rowsN, cols);
        w.prepareInt8Rows();
        float[] xs = RowCases.gaussian(tokens * cols, 99);
        qlab.quant.kernel.Int8Strips.Activations a = new qlab.quant.kernel.Int8Strips.Activations(
                Int8Activations.quantize(xs, 0, cols, tokens, w.activationBlock()));
        float[] all = new float[rowsN * tokens];
        w.dotInt8Rows(0, rowsN, a, all, 0, rowsN);
        float[] split = new float[rowsN * tokens];
        int[] cuts = {0, 16, 53, rowsN};
        for (int i = 0; i + 1 < cuts.length; i++) {
            w.dotInt8Rows(cuts[i], cuts[i + 1], a, split, 0, rowsN);
        }
        for (int t = 0; t < tokens; t++) {
            for (int r = 0; r < rowsN; r++) {
                int expected = Float.floatToIntBits(w.dotInt8Scalar(r, a.codes(), t));
                assertEquals(expected, Float.floatToIntBits(all[r + t * rowsN]), name + " row " + r + " token " + t);
                assertEquals(expected, Float.floatToIntBits(split[r + t * rowsN]), name + " row " + r + " token " + t + ", split");
            }
        }
    }
}
