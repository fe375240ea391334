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
    void quantizersRoundHalfAwayFromZero() {
        // Scale 1 exactly (max 127 for q8_0, signed max -8 for q4_0), so x / d is the value itself.
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
        assertArrayEquals(new float[] {-8, 3, -3, 7, -1}, java.util.Arrays.copyOf(roundTrip("q4_0", q4), 5));

        Int8Activations a = Int8Activations.quantize(new float[] {127f, 2.5f, -2.5f, -0.5f}, 0, 4, 1, 32);
        assertArrayEquals(new byte[] {127, 3, -3, -1}, a.codes());
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
