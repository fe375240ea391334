package qlab.quant.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import qlab.quant.Int8Activations;

class Int8StripsTest {

    /**
     * Scales that are fp16 values (every sign, zero, subnormal halves, the largest half) are kept
     * in 2 bytes and widened in the kernel; one scale that is not makes the strips keep f32. Either
     * way every row is bitwise the scalar fold sum += isum × (weight scale × activation scale) over
     * the blocks in order, with a partial last block where the width asks for one, whether the
     * strips share one array or take one each.
     */
    @ParameterizedTest(name = "{0} cols, block {1}, {2}-bit levels, f32 scale: {3}")
    @CsvSource({
        "96, 32, 4, false", "96, 32, 4, true", "100, 32, 4, false", "256, 64, 4, false", "256, 128, 4, true",
        "96, 32, 8, false", "100, 32, 8, true", "256, 128, 8, false", "96, 32, 2, false", "96, 32, 5, false",
        "112, 32, 5, true", "33, 32, 5, false", "96, 32, 6, false", "100, 32, 6, true", "256, 32, 6, false"})
    void everyRowIsItsScalarFoldWithHalfOrFloatScales(int cols, int block, int bits, boolean oneF32Scale) {
        int strips = 3;
        int rows = strips * Int8Strips.ROWS;
        int blocksPerRow = (cols + block - 1) / block;
        SplittableRandom r = new SplittableRandom(cols * 31L + block * 7L + bits + (oneF32Scale ? 1 : 0));
        int[] levels = new int[rows * cols];
        int max = bits == 8 ? 127 : (1 << bits - 1) - 1;
        for (int i = 0; i < levels.length; i++) {
            levels[i] = r.nextInt(bits == 8 ? -max : -max - 1, max + 1);
        }
        float[] special = {0f, -0f, Float.float16ToFloat((short) 1), -Float.float16ToFloat((short) 0x3FF), 65504f, -65504f, 6.1035156e-5f};
        float[] scales = new float[rows * blocksPerRow];
        for (int i = 0; i < scales.length; i++) {
            scales[i] = i < special.length ? special[i]
                    : Float.float16ToFloat(Float.floatToFloat16((float) r.nextDouble(-0.02, 0.02)));
        }
        if (oneF32Scale) {
            scales[scales.length / 2] = 0.1f; // not a half: every scale stays f32
        }
        float[] x = new float[3 * cols];
        for (int i = 0; i < x.length; i++) {
            x[i] = (float) r.nextGaussian() * (i % 17 == 0 ? 40 : 1);
        }
        Int8Activations a = Int8Activations.quantize(x, 0, cols, 3, block);
        Int8Strips.Levels rowLevels = (row, dst) -> {
            for (int j = 0; j < cols; j++) {
                dst[j] = levels[row * cols + j];
            }
        };
        for (long maxArrayBytes : new long[] {Int8Strips.MAX_ARRAY_BYTES, 1}) {
            Int8Strips st = new Int8Strips(strips, cols, block, bits, rowLevels, scales, maxArrayBytes);
            check(st, a, levels, scales, cols, block, bits, oneF32Scale, maxArrayBytes);
        }
    }

    private static void check(Int8Strips st, Int8Activations a, int[] levels, float[] scales, int cols, int block,
            int bits, boolean oneF32Scale, long maxArrayBytes) {
        int rows = st.strips() * Int8Strips.ROWS;
        int blocksPerRow = (cols + block - 1) / block;

        int wholeBlocks = cols / block;
        long codeBytes = bits == 5 ? (long) rows * wholeBlocks * 2 * Int8Strips.FIVE_BIT_WORDS
                : bits == 6 ? (long) rows * wholeBlocks * 2 * Int8Strips.SIX_BIT_WORDS
                : (long) rows * wholeBlocks * block / (bits == 8 ? 1 : 2);
        assertEquals(bits == 8 ? "bytes" : bits == 6 ? "6-bit words" : bits == 5 ? "5-bit words" : "nibbles", st.kernel());
        long scaleBytes = (long) rows * wholeBlocks * (oneF32Scale ? 4 : 2);
        long tailBytes = cols % block == 0 ? 0 : (long) rows * (cols % block) + 4L * rows;
        assertEquals(codeBytes + scaleBytes + tailBytes, st.byteSize(), "strip bytes");

        float[] y = new float[3 * (rows + 1)];
        Arrays.fill(y, Float.NaN);
        st.rows(0, rows, new Int8Strips.Activations(a), y, 1, rows + 1);
        byte[] q = a.codes();
        for (int t = 0; t < 3; t++) {
            for (int row = 0; row < rows; row++) {
                float sum = 0;
                for (int b = 0; b < blocksPerRow; b++) {
                    int isum = 0;
                    for (int j = b * block; j < Math.min(cols, (b + 1) * block); j++) {
                        isum += levels[row * cols + j] * q[t * cols + j];
                    }
                    sum += isum * (scales[row * blocksPerRow + b] * a.scales()[t * blocksPerRow + b]);
                }
                assertEquals(Float.floatToRawIntBits(sum), Float.floatToRawIntBits(y[1 + row + t * (rows + 1)]),
                        "row " + row + ", token " + t + ", arrays of " + maxArrayBytes + " bytes at most: " + sum
                                + " vs " + y[1 + row + t * (rows + 1)]);
            }
        }
    }

    /**
     * A scale and a min per 16 values inside 32-value activation blocks (the k-quants' sub-blocks),
     * and 5-bit or nibble codes with a scale and a min per 32 (q5_k, q4_k: levels 0..31 and 0..15,
     * taken off by the level bias): every row bitwise the scalar fold over the sub-blocks in order,
     * sum += isum × (scale × activation scale), then sum += min × (activation scale × Σ codes),
     * partial last sub-blocks included. With factors ({@link Int8Strips.Factors}: the k-quants'
     * scales d × sc and minima dmin × m, d and dmin fp16 per 256 values, sc and m 6-bit) the strips
     * keep byte multipliers and give the same bits; factors one scale is not a multiple of
     * ("broken") leave the strips with float scales, the same bits again.
     */
    @ParameterizedTest(name = "{0} cols, scale per {1}, {2}-bit levels 0..{3}, factors {4}")
    @CsvSource({"96, 16, 8, 63, none", "100, 16, 8, 63, none", "120, 16, 8, 63, none", "96, 32, 5, 31, none",
        "100, 32, 5, 31, none", "96, 32, 4, 15, none", "127, 32, 4, 15, none",
        "512, 16, 8, 63, exact", "600, 16, 8, 63, exact", "512, 32, 5, 31, exact", "520, 32, 5, 31, exact",
        "512, 32, 4, 15, exact", "300, 32, 4, 15, exact", "512, 32, 4, 15, broken", "512, 16, 8, 63, broken",
        "96, 16, 6, 63, none", "100, 16, 6, 63, none", "600, 16, 6, 63, exact", "512, 16, 6, 63, broken",
        "96, 16, 6, 63, exact", "256, 32, 6, 63, exact", "96, 16, 8, 64, none", "512, 16, 8, 64, exact"})
    void subBlockScalesAndMinsAreTheScalarFold(int cols, int scaleBlock, int bits, int maxLevel, String factoring) {
        int strips = 2;
        int rows = strips * Int8Strips.ROWS;
        int scalesPerRow = (cols + 255) / 256 * 256 / scaleBlock; // as the k-quants' padded rows
        SplittableRandom r = new SplittableRandom(cols * 13L + scaleBlock + bits);
        int[] levels = new int[rows * cols];
        int bias = bits >= 6 ? 32 : 0; // q6_k's levels, −32..31 (maxLevel 64: byte levels up to 32)
        for (int i = 0; i < levels.length; i++) {
            levels[i] = r.nextInt(maxLevel + 1) - bias;
        }
        for (int j = 0; j < cols; j++) {
            levels[5 * cols + j] = maxLevel - bias; // a row at the grid's top
            levels[6 * cols + j] = -bias;           // and one at its bottom
        }
        float[] scales = new float[rows * scalesPerRow];
        float[] mins = new float[rows * scalesPerRow];
        int perFactor = 256 / scaleBlock;
        int factorsPerRow = scalesPerRow / perFactor;
        float[] scaleFactors = new float[rows * factorsPerRow];
        float[] minFactors = new float[rows * factorsPerRow];
        for (int i = 0; i < scaleFactors.length; i++) {
            scaleFactors[i] = i == 3 ? 0f : Float.float16ToFloat(Float.floatToFloat16((float) r.nextDouble(1e-5, 2e-3)));
            minFactors[i] = -Float.float16ToFloat(Float.floatToFloat16((float) r.nextDouble(1e-4, 5e-3)));
        }
        for (int i = 0; i < scales.length; i++) {
            if (factoring.equals("none")) {
                scales[i] = (float) r.nextDouble(0, 0.01);
                mins[i] = (float) -r.nextDouble(0, 0.2);
            } else {
                int row = i / scalesPerRow;
                int f = row * factorsPerRow + i % scalesPerRow / perFactor;
                scales[i] = scaleFactors[f] * (bits >= 6 ? r.nextInt(-32, 32) : r.nextInt(64));
                mins[i] = minFactors[f] * r.nextInt(64);
            }
        }
        if (factoring.equals("broken")) {
            scales[7] = Math.nextUp(scales[7] == 0 ? 1e-3f : scales[7]);
        }
        Int8Strips.Factors factors = factoring.equals("none") ? null : new Int8Strips.Factors(perFactor, scaleFactors, minFactors);
        float[] x = new float[3 * cols];
        for (int i = 0; i < x.length; i++) {
            x[i] = (float) r.nextGaussian() * (i % 17 == 0 ? 40 : 1);
        }
        java.util.Arrays.fill(x, 0, cols, -2f); // every code −127
        Int8Activations a = Int8Activations.quantize(x, 0, cols, 3, 32);
        int levelBias = bits == 5 ? 16 : bits == 4 ? 8 : 0;
        Int8Strips st = new Int8Strips(strips, cols, 32, scaleBlock, scalesPerRow, bits, levelBias, (row, dst) -> {
            for (int j = 0; j < cols; j++) {
                dst[j] = levels[row * cols + j];
            }
        }, scales, mins, factors, 1);
        float[] y = new float[3 * rows];
        // Byte multipliers: 1 byte per scale and min instead of 4 (q4_k: 4 + 2 + 1/4 bits per weight, not 6).
        long codeBytes = (long) rows * (cols / 32) * (bits == 8 ? 32 : bits == 6 ? 24 : bits == 5 ? 22 : 16);
        // Byte levels in [−32, 32] (q6_k's, q3_k's, q2_k's) take the kernel that sums eight products in 16 bits.
        assertEquals(bits == 8 ? "small bytes" : bits == 6 ? "6-bit words" : bits == 5 ? "5-bit words" : "nibbles", st.kernel());
        long scaleBytes = (long) rows * (cols / 32 * 32 / scaleBlock) * 2 * (factoring.equals("exact") ? 1 : 4);
        long headBytes = factoring.equals("exact") ? (long) rows * 8 * ((cols / 32 + 256 / 32 - 1) / (256 / 32)) : 0;
        long tailBytes = (long) rows * (cols % 32) + 4L * 2 * rows * ((cols % 32 + scaleBlock - 1) / scaleBlock);
        assertEquals(codeBytes + scaleBytes + headBytes + tailBytes, st.byteSize(), "bytes of the strips");
        st.rows(0, rows, new Int8Strips.Activations(a), y, 0, rows);
        byte[] q = a.codes();
        for (int t = 0; t < 3; t++) {
            for (int row = 0; row < rows; row++) {
                float sum = 0;
                for (int j0 = 0; j0 < cols; j0 += scaleBlock) {
                    int isum = 0;
                    int csum = 0;
                    for (int j = j0; j < Math.min(cols, j0 + scaleBlock); j++) {
                        isum += levels[row * cols + j] * q[t * cols + j];
                        csum += q[t * cols + j];
                    }
                    float da = a.scales()[t * a.blocksPerRow() + j0 / 32];
                    sum += isum * (scales[row * scalesPerRow + j0 / scaleBlock] * da);
                    sum += mins[row * scalesPerRow + j0 / scaleBlock] * (da * csum);
                }
                assertEquals(Float.floatToRawIntBits(sum), Float.floatToRawIntBits(y[row + t * rows]),
                        "row " + row + ", token " + t + ": " + sum + " vs " + y[row + t * rows]);
            }
        }
    }

    /** 6-bit codes hold levels −32..31: another is refused, not wrapped. */
    @org.junit.jupiter.api.Test
    void sixBitStripsRefuseALevelOutsideTheirRange() {
        Int8Strips.Levels levels = (row, dst) -> java.util.Arrays.fill(dst, row == 3 ? 32 : -32);
        IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> new Int8Strips(1, 64, 32, 6, levels, new float[2 * Int8Strips.ROWS]));
        assertEquals("level 32 does not fit a 6-bit code", e.getMessage());
    }
}
