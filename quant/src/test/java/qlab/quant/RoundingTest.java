package qlab.quant;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;
import qlab.quant.kernel.CodeGrid;

class RoundingTest {

    @Test
    void tiesGoAwayFromZero() {
        assertEquals(3, Rounding.halfAwayFromZero(2.5f));
        assertEquals(-3, Rounding.halfAwayFromZero(-2.5f));
        assertEquals(1, Rounding.halfAwayFromZero(0.5f));
        assertEquals(-1, Rounding.halfAwayFromZero(-0.5f));
        assertEquals(0, Rounding.halfAwayFromZero(0.49999997f));
        assertEquals(0, Rounding.halfAwayFromZero(-0.49999997f));
        assertEquals(2, Rounding.halfAwayFromZero(1.5f));
        assertEquals(-2, Rounding.halfAwayFromZero(-1.5f));
        assertEquals(8388609, Rounding.halfAwayFromZero(8388609f)); // large integers stay put
        assertEquals(2, Rounding.halfAwayFromZero(2.4999998f));
        assertEquals(0, Rounding.halfAwayFromZero(-0.0f));
        // Math.round, for contrast, sends -2.5 to -2.
        assertEquals(-2, Math.round(-2.5f));
    }

    @Test
    void oddGridTiesGoAwayFromZero() {
        // Q2 levels are ±1, ±3: y = ±2 is a tie between 1 and 3.
        assertEquals(3, CodeGrid.Q2.nearestLevel(2f));
        assertEquals(-3, CodeGrid.Q2.nearestLevel(-2f));
        assertEquals(1, CodeGrid.Q2.nearestLevel(1.99f));
        assertEquals(3, CodeGrid.Q2.nearestLevel(100f));
        assertEquals(1, CodeGrid.TERNARY.nearestLevel(0.5f));
        assertEquals(-1, CodeGrid.TERNARY.nearestLevel(-0.5f));
        assertEquals(0, CodeGrid.TERNARY.nearestLevel(0.49f));
    }

    @Test
    void quantizersRoundTiesAsTheirRulesSay() {
        // Scale 1 exactly (max 127 for q8_0, signed max -8 for q4_0), so x / d is the value itself.
        // q8_0 rounds as ggml does, with roundf: ties away from zero.
        float[] q8 = new float[32];
        q8[0] = 127f;
        q8[1] = 2.5f;
        q8[2] = -2.5f;
        q8[3] = 0.5f;
        q8[4] = -0.5f;
        q8[5] = -126.5f;
        assertArrayEquals(new float[] {127, 3, -3, 1, -1, -127}, java.util.Arrays.copyOf(roundTrip("q8_0", q8), 6));

        float[] q4 = new float[32];
        q4[0] = -8f;
        q4[1] = 2.5f;
        q4[2] = -2.5f;
        q4[3] = 6.5f;
        q4[4] = -0.5f;
        // q4_0 follows ggml's reference quantizer: code = (int) (x / d + 8.5f), so ties round upward.
        assertArrayEquals(new float[] {-8, 3, -2, 7, 0}, java.util.Arrays.copyOf(roundTrip("q4_0", q4), 5));

        Int8Activations a = Int8Activations.quantize(new float[] {127f, 2.5f, -2.5f, -0.5f}, 0, 4, 1, 32);
        assertArrayEquals(new byte[] {127, 3, -3, -1}, a.codes());
    }

    /**
     * The vector activation quantizer agrees bitwise with its scalar reference: exact ties k + 0.5
     * (block maximum 127, so the scale is exactly 1), values a hair either side of a tie, zero
     * blocks, one huge outlier, an infinity, denormals, negative zero, and widths that end in a
     * partial block.
     */
    @org.junit.jupiter.api.Test
    void vectorActivationQuantizerEqualsTheScalarReference() {
        java.util.Random rnd = new java.util.Random(9);
        for (int block : new int[] {32, 64, 128}) {
            for (int cols : new int[] {block, 3 * block, 2 * block + 24, 17}) {
                int tokens = 3;
                float[] x = new float[tokens * cols + 5];
                for (int i = 0; i < x.length; i++) {
                    x[i] = switch (i % 7) {
                        case 0 -> rnd.nextInt(254) - 127 + 0.5f;
                        case 1 -> Math.nextUp(rnd.nextInt(200) - 100 + 0.5f);
                        case 2 -> Math.nextDown(rnd.nextInt(200) - 100 + 0.5f);
                        case 3 -> Float.MIN_VALUE * rnd.nextInt(100);
                        case 4 -> -0f;
                        default -> (float) rnd.nextGaussian() * 40;
                    };
                }
                for (int b = 0; b * block < cols; b++) {
                    x[5 + b * block] = 127f; // scale exactly 1 in every block of token 0: ties stay ties
                }
                java.util.Arrays.fill(x, 5 + cols, 5 + cols + Math.min(block, cols), 0f); // a zero block
                x[5 + 2 * cols] = 3e30f; // one huge outlier in token 2
                x[5 + cols + cols - 1] = Float.POSITIVE_INFINITY; // a broken activation: its block codes 0 (NaN, x/inf)
                Int8Activations r = Int8Activations.quantizeScalar(x, 5, cols, tokens, block);
                // Repeated until the JIT has compiled the vector path: compiled code must agree too.
                for (int rep = 0; rep < 2000; rep++) {
                    Int8Activations v = Int8Activations.quantize(x, 5, cols, tokens, block);
                    String where = "block " + block + ", cols " + cols + ", repetition " + rep;
                    assertArrayEquals(r.codes(), v.codes(), where);
                    assertArrayEquals(r.scales(), v.scales(), where);
                }
            }
        }
    }

    private static float[] roundTrip(String name, float[] row) {
        QuantFormat f = Formats.byName(name);
        MemorySegment seg = Arena.ofAuto().allocate(f.bytesPerRow(row.length));
        f.quantizeRow(row, 0, row.length, null, seg, 0);
        float[] out = new float[row.length];
        f.dequantizeRow(seg, 0, row.length, out, 0);
        return out;
    }
}
