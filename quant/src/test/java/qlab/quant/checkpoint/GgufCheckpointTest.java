package qlab.quant.checkpoint;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import qlab.engine.QlabException;
import qlab.engine.gguf.GgufFile;
import qlab.engine.gguf.GgufModel;
import qlab.engine.gguf.GgufTensor;
import qlab.engine.gguf.GgufTensorType;
import qlab.engine.gguf.GgufWriter;
import qlab.engine.model.Model;
import qlab.engine.model.Transformer;
import qlab.engine.testing.Fixtures;
import qlab.engine.testing.GgmlFixtures;
import qlab.engine.util.WorkerPool;
import qlab.quant.QuantizedMatrix;
import qlab.quant.ggml.GgmlType;

/** llama.cpp's quantized GGUF files read as qlab models (fixtures/ggml/models, recipes). */
class GgufCheckpointTest {

    private static final ValueLayout.OfShort SHORT_LE = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    static String sha256(MemorySegment s) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(s.toArray(ValueLayout.JAVA_BYTE)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void tensorsAreWhereLlamaQuantizeWroteThem() {
        GgufFile f = GgufCheckpoint.open(GgmlFixtures.model("tiny-k.q8_0.gguf"));
        JsonNode recipe = Fixtures.json(GgmlFixtures.dir().resolve("recipes/Q8_0.json"));
        assertEquals(recipe.get("tensors").size(), f.tensors().size());
        for (JsonNode t : recipe.get("tensors")) {
            GgufTensor g = f.tensor(t.get("name").asText());
            assertEquals(t.get("type").asText(), g.type().name());
            assertEquals(t.get("n_bytes").asLong(), g.bytes());
            assertEquals(t.get("data_offset").asLong(), f.dataStart() + g.offset(), g.name());
            assertEquals(t.get("sha256").asText(), sha256(f.bytes(g.name())), g.name());
        }
    }

    /** ggml's to_float for Q8_0, written out: y[j] = qs[j] * d, d widened from f16. */
    private static float[] q8_0ByGgmlsRule(MemorySegment blocks, long values) {
        float[] out = new float[(int) values];
        for (int b = 0; b < values / 32; b++) {
            long at = b * 34L;
            float d = Float.float16ToFloat(blocks.get(SHORT_LE, at));
            for (int j = 0; j < 32; j++) {
                out[b * 32 + j] = blocks.get(ValueLayout.JAVA_BYTE, at + 2 + j) * d;
            }
        }
        return out;
    }

    @Test
    void q8_0TensorsReadAsGgmlDequantizesThem() {
        GgufFile f = GgufCheckpoint.open(GgmlFixtures.model("tiny-k.q8_0.gguf"));
        int checked = 0;
        for (GgufTensor t : f.tensors().values()) {
            if (t.type().id() == GgmlType.Q8_0.id) {
                float[] expected = q8_0ByGgmlsRule(f.bytes(t.name()), t.elementCount());
                float[] got = GgufCheckpoint.values(f, t.name());
                for (int i = 0; i < expected.length; i++) {
                    if (Float.floatToRawIntBits(expected[i]) != Float.floatToRawIntBits(got[i])) {
                        throw new AssertionError(t.name() + "[" + i + "]: " + got[i] + ", ggml gives " + expected[i]);
                    }
                }
                checked++;
            }
        }
        assertEquals(15, checked); // token_embd and 7 matrices per layer
    }

    @Test
    void q8_0ModelRunsOnQ8_0KernelsAndAgreesWithItsDequantizedWeights() {
        Path file = GgmlFixtures.model("tiny-k.q8_0.gguf");
        Model q = GgufCheckpoint.load(file, false, false);
        Model f32 = GgufCheckpoint.load(file, false, true);
        assertInstanceOf(QuantizedMatrix.class, q.weights().layers()[0].q());
        assertEquals("q8_0", ((QuantizedMatrix) q.weights().embed()).quantFormat().name());
        int[] tokens = Arrays.copyOf(Fixtures.ints(Fixtures.json(GgmlFixtures.dir().resolve("llamacpp-eval-tokens.json"))
                .get("ids")), 32);
        try (WorkerPool pool = new WorkerPool(2)) {
            Transformer a = new Transformer(q, pool);
            Transformer b = new Transformer(f32, pool);
            float[] la = a.forward(tokens, a.newCache(32), true);
            float[] lb = b.forward(tokens, b.newCache(32), true);
            double max = 0;
            double diff = 0;
            for (int i = 0; i < la.length; i++) {
                max = Math.max(max, Math.abs(lb[i]));
                diff = Math.max(diff, Math.abs(la[i] - lb[i]));
            }
            assertTrue(diff <= 1e-4 * max, "logits differ by " + diff + " (largest " + max + ")");
        }
    }

    @Test
    void aTypeWithoutACodecIsRefusedNamingTheTensorAndType(@TempDir Path dir) {
        GgufFile src = GgufCheckpoint.open(GgmlFixtures.model("tiny-k.q8_0.gguf"));
        Path out = dir.resolve("tq2.gguf");
        GgufWriter w = new GgufWriter(src.alignment());
        src.metadata().forEach(w::put);
        GgufTensorType tq2 = GgufCheckpoint.TYPES.apply(GgmlType.TQ2_0.id);
        for (GgufTensor t : src.tensors().values()) {
            if (t.name().equals("blk.0.ffn_down.weight")) {
                long bytes = tq2.rowBytes(t.ne()[0]) * t.ne()[1];
                w.tensor(t.name(), t.ne(), tq2, bytes, () -> MemorySegment.ofArray(new byte[(int) bytes]));
            } else {
                w.tensor(t.name(), t.ne(), t.type(), t.bytes(), () -> src.bytes(t.name()));
            }
        }
        w.write(out);
        QlabException e = assertThrows(QlabException.class, () -> GgufCheckpoint.load(out));
        assertTrue(e.getMessage().startsWith(out + ": tensor \"blk.0.ffn_down.weight\""), e.getMessage());
        assertTrue(e.getMessage().contains("TQ2_0"), e.getMessage());
        assertFalse(e.getMessage().contains("\n"));
    }

    @Test
    void aCopyWrittenByTheWriterReadsBackIdentically(@TempDir Path dir) {
        GgufFile src = GgufCheckpoint.open(GgmlFixtures.model("tiny-k.q8_0.gguf"));
        Path out = dir.resolve("copy.gguf");
        GgufWriter w = new GgufWriter(src.alignment());
        src.metadata().forEach(w::put);
        for (GgufTensor t : src.tensors().values()) {
            w.tensor(t.name(), t.ne(), t.type(), t.bytes(), () -> src.bytes(t.name()));
        }
        w.write(out);
        GgufFile back = GgufCheckpoint.open(out);
        assertEquals(src.metadata(), back.metadata());
        assertEquals(src.tensors().keySet(), back.tensors().keySet());
        for (GgufTensor t : src.tensors().values()) {
            GgufTensor b = back.tensor(t.name());
            assertArrayEquals(t.ne(), b.ne());
            assertEquals(t.type(), b.type());
            assertEquals(-1, src.bytes(t.name()).mismatch(back.bytes(t.name())), t.name());
        }
        assertEquals(GgufModel.of(src).config(), GgufModel.of(back).config());
    }
}
