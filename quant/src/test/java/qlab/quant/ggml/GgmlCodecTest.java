package qlab.quant.ggml;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.Random;
import qlab.quant.Formats;
import qlab.quant.QuantFormat;

/**
 * Every format with a ggml type: its rows convert to ggml's blocks and back to the same bytes.
 * {@link #assertDequantizes}: ggml's own blocks (the quant-vectors goldens) read through the codec
 * dequantize to exactly what ggml's {@code to_float} gave.
 */
class GgmlCodecTest {

    static List<QuantFormat> withGgmlType() {
        return Formats.allVariants().stream().filter(f -> f.ggml().isPresent()).toList();
    }

    @org.junit.jupiter.api.Test
    void everyFormatWithAGgmlTypeRoundTripsItsRowsExactly() {
        Random rnd = new Random(22);
        List<QuantFormat> formats = withGgmlType();
        assertTrue(formats.size() >= 5, "f32, f16, bf16, q8_0, q4_0 at least");
        for (QuantFormat f : formats) {
            GgmlCodec codec = f.ggml().orElseThrow();
            for (int cols : new int[] {32, 96, 512, 768}) {
                if (cols % codec.type().blockSize != 0) {
                    continue; // a GGUF row holds whole blocks
                }
                int rows = 3;
                float[] x = new float[rows * cols];
                for (int i = 0; i < x.length; i++) {
                    x[i] = (float) (rnd.nextGaussian() * (i % 7 == 0 ? 3 : 0.1));
                }
                long qRow = f.bytesPerRow(cols);
                long gRow = codec.type().rowBytes(cols);
                assertEquals(qRow, gRow, f + ": a qlab row and a ggml row hold the same bytes");
                try (Arena arena = Arena.ofConfined()) {
                    MemorySegment q = arena.allocate(rows * qRow);
                    MemorySegment g = arena.allocate(rows * gRow);
                    MemorySegment back = arena.allocate(rows * qRow);
                    for (int r = 0; r < rows; r++) {
                        f.quantizeRow(x, r * cols, cols, null, q, r * qRow);
                        codec.toGgml(q, r * qRow, cols, g, r * gRow);
                        codec.fromGgml(g, r * gRow, cols, back, r * qRow);
                    }
                    assertArrayEquals(q.toArray(ValueLayout.JAVA_BYTE), back.toArray(ValueLayout.JAVA_BYTE), f + " width " + cols);
                }
            }
        }
    }

    static void assertDequantizes(QuantFormat f, GgmlCodec codec, QuantVectors.Golden gold) {
        int cols = gold.cols();
        assertEquals(gold.rowBytes(), f.bytesPerRow(cols));
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment g = arena.allocate(gold.quantized().length);
            MemorySegment.copy(gold.quantized(), 0, g, ValueLayout.JAVA_BYTE, 0, gold.quantized().length);
            MemorySegment q = arena.allocate(gold.rowBytes());
            float[] out = new float[cols];
            for (int r = 0; r < gold.rows(); r++) {
                codec.fromGgml(g, (long) r * gold.rowBytes(), cols, q, 0);
                f.dequantizeRow(q, 0, cols, out, 0);
                for (int j = 0; j < cols; j++) {
                    float want = gold.dequantized()[r * cols + j];
                    String where = f + " set " + gold.set() + " row " + r + " col " + j;
                    if (Float.isNaN(want)) {
                        assertTrue(Float.isNaN(out[j]), where + ": want NaN, got " + out[j]);
                    } else {
                        assertEquals(Float.floatToIntBits(want), Float.floatToIntBits(out[j]), where + ": want " + want + ", got " + out[j]);
                    }
                }
            }
        }
    }
}
