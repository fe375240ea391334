package qlab.quant.checkpoint;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import qlab.engine.QlabException;
import qlab.engine.gguf.GgufFile;
import qlab.engine.gguf.GgufModel;
import qlab.engine.gguf.GgufTensor;
import qlab.engine.gguf.GgufTokenizer;
import qlab.engine.gguf.GgufValue;
import qlab.engine.model.Model;
import qlab.engine.tensor.F32Matrix;
import qlab.engine.testing.Fixtures;
import qlab.engine.testing.GgmlFixtures;
import qlab.engine.testing.TestModels;
import qlab.engine.util.WorkerPool;
import qlab.quant.QuantizedMatrix;

/** qlab configurations written as GGUF, against llama-quantize's output for the same model (fixtures/ggml). */
class GgufExportTest {

    @TempDir
    static Path tmp;
    static Model tinyK;
    static Path q8;

    @BeforeAll
    static void exportQ8_0() {
        tinyK = Model.load(GgmlFixtures.model("tiny-k"));
        q8 = tmp.resolve("tiny-k.q8_0.gguf");
        export("q8_0", q8);
    }

    private static void export(String spec, Path out) {
        try (WorkerPool pool = new WorkerPool(2)) {
            GgufExport.write(tinyK, "tiny-k", QuantPlan.parse(spec), null,
                    GgufTokenizer.metadataOf(GgmlFixtures.model("tiny-k")), pool, out);
        }
    }

    @Test
    void q8_0ExportHasLlamaQuantizesTensors() {
        GgufFile f = GgufCheckpoint.open(q8);
        JsonNode recipe = Fixtures.json(GgmlFixtures.dir().resolve("recipes/Q8_0.json"));
        assertEquals(recipe.get("tensors").size(), f.tensors().size());
        for (JsonNode t : recipe.get("tensors")) {
            GgufTensor g = f.tensor(t.get("name").asText());
            assertEquals(t.get("type").asText(), g.type().name(), g.name());
            assertEquals(t.get("ne").toString(), java.util.Arrays.toString(g.ne()).replace(" ", ""), g.name());
            assertEquals(t.get("sha256").asText(), GgufCheckpointTest.sha256(f.bytes(g.name())), g.name());
        }
        assertEquals(32, f.alignment());
        JsonNode meta = recipe.get("metadata");
        for (String key : new String[] {"general.architecture", "general.file_type", "qwen2.block_count",
            "qwen2.embedding_length", "qwen2.attention.head_count_kv", "tokenizer.ggml.pre", "tokenizer.ggml.bos_token_id",
            "tokenizer.ggml.eos_token_id", "tokenizer.ggml.padding_token_id", "general.quantization_version"}) {
            assertEquals(meta.get(key).asText(), String.valueOf(f.metadata().get(key).value()), key);
        }
        assertEquals(meta.get("qwen2.attention.layer_norm_rms_epsilon").asDouble(), f.number("qwen2.attention.layer_norm_rms_epsilon"));
        assertFalse(f.bool("tokenizer.ggml.add_bos_token", true));
    }

    /**
     * llama-quantize's legacy types on this model: every matrix in the type except token_embd, which
     * its output-tensor rule puts in Q8_0 (recipes/*.json); without and with llama-imatrix's matrix
     * (read from its GGUF file).
     */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.CsvSource({"Q4_0,false", "Q4_1,false", "Q5_0,false", "Q5_1,false", "Q8_0,true",
        "Q4_0,true", "Q4_1,true", "Q5_0,true", "Q5_1,true"})
    void legacyTypeExportsHaveLlamaQuantizesTensors(String type, boolean withImatrix) {
        Path out = tmp.resolve(type + withImatrix + ".gguf");
        var im = withImatrix ? qlab.quant.imatrix.LlamaImatrix.load(GgmlFixtures.dir().resolve("imatrix/tiny-k.imatrix.gguf")) : null;
        try (WorkerPool pool = new WorkerPool(2)) {
            GgufExport.write(tinyK, "tiny-k", QuantPlan.parse(type.toLowerCase() + "+emb=q8_0"), im,
                    GgufTokenizer.metadataOf(GgmlFixtures.model("tiny-k")), pool, out);
        }
        GgufFile f = GgufCheckpoint.open(out);
        JsonNode recipe = Fixtures.json(GgmlFixtures.dir().resolve("recipes/" + type + (withImatrix ? ".imatrix" : "") + ".json"));
        for (JsonNode t : recipe.get("tensors")) {
            GgufTensor g = f.tensor(t.get("name").asText());
            assertEquals(t.get("type").asText(), g.type().name(), g.name());
            assertEquals(t.get("sha256").asText(), GgufCheckpointTest.sha256(f.bytes(g.name())), type + " " + g.name());
        }
        assertEquals(recipe.get("metadata").get("general.file_type").asInt(), f.integer("general.file_type"));
    }

    @Test
    void theTokenizerMetadataIsLlamaCppsConverters() {
        GgufFile ours = GgufCheckpoint.open(q8);
        GgufFile theirs = GgufCheckpoint.open(GgmlFixtures.model("tiny-k.f16.gguf"));
        for (String key : new String[] {GgufTokenizer.MODEL, GgufTokenizer.PRE, GgufTokenizer.TOKENS,
            GgufTokenizer.TOKEN_TYPE, GgufTokenizer.MERGES}) {
            assertEquals(theirs.metadata().get(key), ours.metadata().get(key), key);
        }
        assertEquals(GgufModel.of(theirs).config().describe(), GgufModel.of(ours).config().describe());
    }

    @Test
    void anExportReadBackGivesBackItsTensors() {
        Path out = tmp.resolve("mix.gguf");
        export("q4_0+mlp-down=q8_0+emb=f16+attn-o=bf16", out);
        Model back = GgufCheckpoint.load(out, false, false);
        Model direct;
        try (WorkerPool pool = new WorkerPool(2)) {
            direct = QuantizedCheckpoint.quantize(tinyK, QuantPlan.parse("q4_0+mlp-down=q8_0+attn-o=bf16"), null, pool);
        }
        var layer = back.weights().layers()[1];
        var expected = direct.weights().layers()[1];
        assertEquals("q4_0", ((QuantizedMatrix) layer.q()).quantFormat().name());
        assertEquals(-1, ((QuantizedMatrix) layer.q()).data().mismatch(((QuantizedMatrix) expected.q()).data()));
        assertEquals(-1, ((QuantizedMatrix) layer.down()).data().mismatch(((QuantizedMatrix) expected.down()).data()));
        // float types load widened to f32: the bf16 values exactly
        assertArrayEquals(GgufCheckpoint.dequantized((QuantizedMatrix) expected.o()), ((F32Matrix) layer.o()).data());
        assertArrayEquals(tinyK.weights().layers()[1].kBias(), layer.kBias());
        // token_embd as F16: the fixture's F16 weights exactly
        GgufFile f = GgufCheckpoint.open(out);
        assertEquals("F16", f.tensor("token_embd.weight").type().name());
        assertEquals(-1, f.bytes("token_embd.weight").mismatch(
                GgufCheckpoint.open(GgmlFixtures.model("tiny-k.f16.gguf")).bytes("token_embd.weight")));
    }

    @Test
    void anAllocatedPlanWithLayerSelectorsExportsEachTensorInItsFormat() {
        // the form `qlab allocate` prints: a default and one override per group, group sizes spelled out
        Path out = tmp.resolve("allocated.gguf");
        export("q4_0/g32+L0.q=q5_0/g32+L1.down=q8_0/g32+v=q5_1/g32+emb=q8_0/g32", out);
        GgufFile f = GgufCheckpoint.open(out);
        assertEquals("Q5_0", f.tensor("blk.0.attn_q.weight").type().name());
        assertEquals("Q4_0", f.tensor("blk.1.attn_q.weight").type().name());
        assertEquals("Q8_0", f.tensor("blk.1.ffn_down.weight").type().name());
        assertEquals("Q4_0", f.tensor("blk.0.ffn_down.weight").type().name());
        assertEquals("Q5_1", f.tensor("blk.0.attn_v.weight").type().name());
        assertEquals("Q5_1", f.tensor("blk.1.attn_v.weight").type().name());
        assertEquals("Q8_0", f.tensor("token_embd.weight").type().name());
        assertEquals("F32", f.tensor("blk.0.attn_norm.weight").type().name());
    }

    @Test
    void formatsWithoutAGgmlTypeAreRefusedListingTheExportableOnes() {
        Path out = tmp.resolve("no.gguf");
        QlabException e = assertThrows(QlabException.class, () -> export("q4_8", out));
        assertFalse(e.getMessage().contains("\n"));
        assertTrue(e.getMessage().contains("q4_8") && e.getMessage().contains("q8_0") && e.getMessage().contains("q4_0"),
                e.getMessage());
        QlabException g = assertThrows(QlabException.class, () -> export("q8_0/g64", out));
        assertTrue(g.getMessage().contains("q8_0/g64"), g.getMessage());
        assertFalse(out.toFile().exists());
    }

    @Test
    void aRowWidthThatIsNotAMultipleOfTheBlockIsRefusedUnlessTheSpecGivesItAnotherFormat() {
        // intermediate 50: ffn_down rows hold 50 values, not a multiple of q4_0's 32
        Model m = TestModels.write(TestModels.oneKvHead(), 3, tmp.resolve("kv1"));
        Path out = tmp.resolve("kv1.gguf");
        try (WorkerPool pool = new WorkerPool(2)) {
            QlabException e = assertThrows(QlabException.class,
                    () -> GgufExport.write(m, "kv1", QuantPlan.parse("q4_0"), null, Map.of(), pool, out));
            assertTrue(e.getMessage().startsWith("tensor blk.0.ffn_down.weight has rows of 50 values"), e.getMessage());
            GgufExport.write(m, "kv1", QuantPlan.parse("q4_0+mlp-down=f16"), null, Map.of(), pool, out);
        }
        assertEquals("F16", GgufCheckpoint.open(out).tensor("blk.1.ffn_down.weight").type().name());
    }

    @Test
    void anUntiedF32ExportRunsBitwiseAsTheSourceModel() {
        Model m = TestModels.write(TestModels.untiedGroup3(), 5, tmp.resolve("untied"));
        Path out = tmp.resolve("untied.gguf");
        try (WorkerPool pool = new WorkerPool(2)) {
            GgufExport.write(m, "untied", QuantPlan.parse("f32"), null, Map.of(), pool, out);
            Model back = GgufCheckpoint.load(out);
            assertEquals(m.config().describe(), back.config().describe());
            assertTrue(GgufCheckpoint.open(out).tensors().containsKey("output.weight"));
            int[] tokens = {1, 7, 42, 299, 3};
            var a = new qlab.engine.model.Transformer(m, pool);
            var b = new qlab.engine.model.Transformer(back, pool);
            assertArrayEquals(a.forward(tokens, a.newCache(8), true), b.forward(tokens, b.newCache(8), true));
        }
    }

    @Test
    void metadataValuesRoundTrip() {
        Map<String, GgufValue> m = GgufCheckpoint.open(q8).metadata();
        assertEquals("tiny-k", m.get("general.name").value());
        assertEquals(4096, ((java.util.List<?>) m.get(GgufTokenizer.TOKENS).value()).size());
    }
}
