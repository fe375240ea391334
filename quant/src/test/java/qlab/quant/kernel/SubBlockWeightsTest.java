package qlab.quant.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.foreign.Arena;
import org.junit.jupiter.api.Test;
import qlab.quant.PackedWeights;

class SubBlockWeightsTest {

    /**
     * q6_k's levels go to the 6-bit strips; copied levels within [−32, 32] (q2_k's, q3_k's) to the
     * byte strips that sum eight products in 16 bits, and one level outside to the plain byte strips.
     */
    @Test
    void eachLevelRangeTakesItsStripKernel() {
        int rows = Int8Strips.ROWS;
        int cols = 256;
        float[] scales = new float[rows * cols / 16];
        try (Arena arena = Arena.ofConfined()) {
            SubBlockWeights q6k = SubBlockWeights.q6kInPlace(arena.allocate(210L * rows), 210, rows, cols, cols, scales);
            assertEquals(6, q6k.int8StripBits());
            q6k.prepareInt8Rows();
            assertEquals(PackedWeights.VECTOR_ENABLED ? "6-bit words" : "none", q6k.int8Kernel());
        }
        byte[] levels = new byte[rows * cols];
        for (int i = 0; i < levels.length; i++) {
            levels[i] = (byte) (i % 65 - 32);
        }
        SubBlockWeights small = SubBlockWeights.copied(rows, cols, cols, levels, scales, null);
        small.prepareInt8Rows();
        assertEquals(PackedWeights.VECTOR_ENABLED ? "small bytes" : "none", small.int8Kernel());
        levels[levels.length - 1] = -33;
        SubBlockWeights wide = SubBlockWeights.copied(rows, cols, cols, levels, scales, null);
        wide.prepareInt8Rows();
        assertEquals(PackedWeights.VECTOR_ENABLED ? "bytes" : "none", wide.int8Kernel());
    }
}
