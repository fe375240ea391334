package qlab.quant.ggml;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import qlab.quant.Formats;
import qlab.quant.QuantFormat;

/**
 * The formats carrying ggml's names quantize as llama.cpp does: for every row of the quant-vectors
 * sets, plain and with importance weights, the ggml blocks written through the codec are the
 * bytes of ggml's reference quantizer (non-finite rows included), and they dequantize to its
 * {@code to_float} values.
 */
class GgmlQuantizerTest {

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "q4_k", "q5_k", "q6_k", "q2_k", "q3_k", "iq4_nl", "iq4_xs"})
    void quantizerWritesGgmlsBytes(String name) {
        QuantFormat f = Formats.byName(name);
        GgmlCodec codec = f.ggml().orElseThrow();
        for (boolean imat : new boolean[] {false, true}) {
            for (QuantVectors.Golden gold : QuantVectors.of(codec.type().name(), imat)) {
                assertQuantizes(f, codec, gold, imat);
                GgmlCodecTest.assertDequantizes(f, codec, gold);
            }
        }
    }

    static void assertQuantizes(QuantFormat f, GgmlCodec codec, QuantVectors.Golden gold, boolean imat) {
        int cols = gold.cols();
        int rowBytes = gold.rowBytes();
        int blockBytes = codec.type().typeSize;
        int differing = 0;
        StringBuilder first = new StringBuilder();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment q = arena.allocate(rowBytes);
            MemorySegment g = arena.allocate(rowBytes);
            for (int r = 0; r < gold.rows(); r++) {
                f.quantizeRow(gold.input(), r * cols, cols, imat ? gold.importance() : null, q, 0);
                codec.toGgml(q, 0, cols, g, 0);
                byte[] got = g.toArray(ValueLayout.JAVA_BYTE);
                for (int b = 0; b < rowBytes / blockBytes; b++) {
                    for (int i = 0; i < blockBytes; i++) {
                        int at = b * blockBytes + i;
                        if (got[at] != gold.quantized()[r * rowBytes + at]) {
                            if (differing++ < 5) {
                                first.append(String.format(" [row %d block %d byte %d: %02x want %02x]", r, b, i,
                                        got[at] & 0xFF, gold.quantized()[r * rowBytes + at] & 0xFF));
                            }
                            break;
                        }
                    }
                }
            }
        }
        assertEquals(0, differing, f + " set " + gold.set() + (imat ? " with importance" : " plain")
                + ": blocks differing from ggml's" + first);
    }
}
