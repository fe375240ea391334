package qlab.quant.imatrix;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import qlab.engine.QlabException;
import qlab.engine.testing.Fixtures;
import qlab.engine.testing.GgmlFixtures;

/** llama.cpp's two importance-matrix formats (fixtures/ggml/imatrix) against their JSON values, and round trips. */
class LlamaImatrixTest {

    private static Path gguf() {
        return GgmlFixtures.dir().resolve("imatrix/tiny-k.imatrix.gguf");
    }

    private static Path dat() {
        return GgmlFixtures.dir().resolve("imatrix/tiny-k.imatrix.dat");
    }

    private static float[] floats(JsonNode a) {
        float[] f = new float[a.size()];
        for (int i = 0; i < f.length; i++) {
            f[i] = (float) a.get(i).doubleValue();
        }
        return f;
    }

    private static void assertBitwise(float[] expected, float[] got, String what) {
        assertEquals(expected.length, got.length, what);
        for (int i = 0; i < expected.length; i++) {
            if (Float.floatToRawIntBits(expected[i]) != Float.floatToRawIntBits(got[i])) {
                throw new AssertionError(what + "[" + i + "]: " + got[i] + ", expected " + expected[i]);
            }
        }
    }

    @Test
    void bothFixtureFilesReadToWhatLlamaQuantizeUses() {
        JsonNode golden = Fixtures.json(GgmlFixtures.dir().resolve("imatrix/tiny-k.imatrix.json")).get("entries");
        ImportanceMatrix fromGguf = LlamaImatrix.load(gguf());
        ImportanceMatrix fromDat = LlamaImatrix.load(dat());
        assertEquals(14, fromGguf.values().size());
        assertEquals(fromGguf.values().keySet(), fromDat.values().keySet());
        golden.fields().forEachRemaining(e -> {
            String qlab = LlamaImatrix.qlabName(e.getKey()).orElseThrow();
            float[] expected = floats(e.getValue().get("quantize_weights_from_gguf"));
            assertBitwise(expected, fromGguf.forMatrix(qlab), "gguf " + e.getKey());
            assertBitwise(expected, fromDat.forMatrix(qlab), "dat " + e.getKey());
            LlamaImatrix raw = LlamaImatrix.readGguf(gguf());
            assertBitwise(floats(e.getValue().get("gguf_in_sum2").get("values")), raw.entries().get(e.getKey()).sums(), "in_sum2");
            assertBitwise(floats(e.getValue().get("dat").get("values")),
                    LlamaImatrix.readDat(dat()).entries().get(e.getKey()).sums(), "dat values");
        });
        assertEquals("model.layers.1.mlp.down_proj.weight", LlamaImatrix.qlabName("blk.1.ffn_down.weight").orElseThrow());
        LlamaImatrix g = LlamaImatrix.readGguf(gguf());
        assertEquals(10, g.chunkCount());
        assertEquals(128, g.chunkSize());
        assertEquals("datasets/calib/en-prose.txt", g.datasets().get(0));
        assertEquals(1280f, g.entries().get("blk.0.attn_q.weight").divisor());
    }

    @Test
    void eachFixtureFileWrittenBackIsTheSameBytes(@TempDir Path dir) throws IOException {
        Path g = dir.resolve("a.gguf");
        LlamaImatrix.readGguf(gguf()).writeGguf(g);
        assertArrayEquals(Files.readAllBytes(gguf()), Files.readAllBytes(g));
        Path d = dir.resolve("a.dat");
        LlamaImatrix.readDat(dat()).writeDat(d);
        assertArrayEquals(Files.readAllBytes(dat()), Files.readAllBytes(d));
    }

    /** A qlab matrix with awkward values: wide exponent range, subnormals, zeros. */
    private static ImportanceMatrix qlabMatrix() {
        Random r = new Random(7);
        Map<String, float[]> v = new LinkedHashMap<>();
        for (String name : new String[] {"model.embed_tokens.weight", "model.layers.0.self_attn.q_proj.weight",
            "model.layers.0.mlp.down_proj.weight", "model.layers.3.self_attn.o_proj.weight"}) {
            float[] x = new float[96];
            for (int i = 0; i < x.length; i++) {
                x[i] = i == 0 ? 0f : i == 1 ? Float.MIN_VALUE * 3 : (float) Math.exp(r.nextGaussian() * 8);
            }
            v.put(name, x);
        }
        Map<String, String> meta = new LinkedHashMap<>();
        meta.put("format", ImportanceMatrix.FORMAT);
        meta.put("tokens", "1283");
        meta.put("texts", "abc,def");
        meta.put("model_hash", "0123");
        meta.put("ctx", "128");
        return new ImportanceMatrix(v, meta);
    }

    @Test
    void qlabToDatToQlabAndQlabToGgufToQlabAreLossless(@TempDir Path dir) {
        ImportanceMatrix m = qlabMatrix();
        for (LlamaImatrix.Format f : new LlamaImatrix.Format[] {LlamaImatrix.Format.DAT, LlamaImatrix.Format.GGUF}) {
            Path out = dir.resolve("m." + f.name().toLowerCase());
            LlamaImatrix.save(m, f, out);
            ImportanceMatrix back = LlamaImatrix.load(out);
            assertEquals(m.values().keySet(), back.values().keySet(), f.name());
            m.values().forEach((k, v) -> assertBitwise(v, back.forMatrix(k), f + " " + k));
            if (f == LlamaImatrix.Format.GGUF) {
                assertEquals(m.metadata(), back.metadata());
            }
        }
        LlamaImatrix asGguf = LlamaImatrix.fromQlab(m, LlamaImatrix.Format.GGUF);
        // GGUF counts are the tokens (1283) as llama-imatrix writes them, or the power of two below when 1283 cannot be exact.
        float count = asGguf.entries().get("blk.0.attn_q.weight").divisor();
        assertTrue(count == 1283f || count == 1024f, "count " + count);
        float[] plain = {0.5f, 0.25f, 2f};
        assertEquals(1283f, LlamaImatrix.scaled(plain, 1283f).divisor());
        assertEquals(11, asGguf.chunkCount());
        float ncall = LlamaImatrix.fromQlab(m, LlamaImatrix.Format.DAT).entries().get("token_embd.weight").divisor();
        assertTrue(ncall == 11f || ncall == 8f, "ncall " + ncall);
    }

    @Test
    void malformedDatFilesNameTheField(@TempDir Path dir) throws IOException {
        byte[] b = Files.readAllBytes(dat());
        for (int cut : new int[] {2, 10, 40, 2000, b.length - 3}) {
            Path p = dir.resolve("cut" + cut + ".dat");
            Files.write(p, Arrays.copyOf(b, cut));
            QlabException e = assertThrows(QlabException.class, () -> LlamaImatrix.load(p), "cut at " + cut);
            assertTrue(e.getMessage().startsWith(p + ": field \""), e.getMessage());
            assertFalse(e.getMessage().contains("\n"));
        }
        Path notImatrix = GgmlFixtures.model("tiny-k.q8_0.gguf");
        QlabException e = assertThrows(QlabException.class, () -> LlamaImatrix.load(notImatrix));
        assertTrue(e.getMessage().contains("general.type"), e.getMessage());
    }
}
