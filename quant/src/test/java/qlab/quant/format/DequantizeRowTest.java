package qlab.quant.format;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import qlab.quant.Formats;
import qlab.quant.QuantFormat;

/** Every block-code format's row decoder gives the bits its one-code-at-a-time reference gives. */
class DequantizeRowTest {

    @Test
    void unitDecodingMatchesTheReference() {
        SplittableRandom r = new SplittableRandom(5);
        int checked = 0;
        for (QuantFormat f : Formats.allVariants()) {
            if (!(f instanceof BlockCodeFormat b)) {
                continue;
            }
            for (int cols : new int[] {1, 17, 32, 33, 64, 100, 127, 256, 1023}) {
                float[] row = new float[cols];
                for (int i = 0; i < cols; i++) {
                    row[i] = (float) (r.nextGaussian() * (1 + i % 7));
                }
                MemorySegment data = MemorySegment.ofArray(new byte[(int) f.bytesPerRow(cols) + 5]);
                f.quantizeRow(row, 0, cols, null, data, 5);
                float[] fast = new float[cols + 3];
                float[] ref = new float[cols + 3];
                b.dequantizeRow(data, 5, cols, fast, 3);
                b.dequantizeRowReference(data, 5, cols, ref, 3);
                assertArrayEquals(ref, fast, f.label() + " at " + cols + " columns");
                checked++;
            }
        }
        assertTrue(checked >= 9 * 8, "only " + checked + " cases: the registry's block-code formats are missing");
    }
}
