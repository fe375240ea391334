package qlab.quant;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;
import qlab.quant.kernel.FloatWeights;

/**
 * The f16 and bf16 vector kernels widen in registers with bit tricks (rebias by 2^112 for f16);
 * check them against the JDK's scalar conversion on every finite 16-bit pattern, subnormals
 * included, by dotting rows of 16 patterns with one-hot activations (w·1 + Σ 0·w = w exactly).
 */
class FloatElementDecodeTest {

    private static void checkAllFinite(FloatWeights.Element element, int exponentMask) {
        int rows = 65536 / 16;
        MemorySegment data = Arena.ofAuto().allocate(65536L * 2);
        for (int p = 0; p < 65536; p++) {
            // Non-finite patterns (all-ones exponent) become 0 so 0·w stays 0 in the one-hot dot.
            short bits = (short) ((p & exponentMask) == exponentMask ? 0 : p);
            data.set(ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 2L * p, bits);
        }
        FloatWeights w = new FloatWeights(element, data, rows, 16);
        float[] x = new float[16];
        int checked = 0;
        for (int r = 0; r < rows; r++) {
            for (int k = 0; k < 16; k++) {
                x[k] = 1f;
                float expected = FloatWeights.decode(element, data, 2L * (r * 16 + k));
                assertEquals(expected, w.dotVector(r, x, 0), 0f, element + " pattern " + (r * 16 + k));
                x[k] = 0f;
                checked++;
            }
        }
        assertEquals(65536, checked);
    }

    @Test
    void f16VectorDecodeMatchesScalarOnEveryFinitePattern() {
        checkAllFinite(FloatWeights.Element.F16, 0x7c00);
        assertEquals(0x1p-24f, FloatWeights.decode(FloatWeights.Element.F16, halfs((short) 1), 0), "smallest f16 subnormal");
    }

    @Test
    void bf16VectorDecodeMatchesScalarOnEveryFinitePattern() {
        checkAllFinite(FloatWeights.Element.BF16, 0x7f80);
    }

    private static MemorySegment halfs(short v) {
        MemorySegment s = Arena.ofAuto().allocate(2);
        s.set(ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 0, v);
        return s;
    }
}
