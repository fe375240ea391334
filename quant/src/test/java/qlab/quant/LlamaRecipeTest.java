package qlab.quant;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import qlab.engine.QlabException;
import qlab.engine.model.ModelConfig;
import qlab.engine.safetensors.SafetensorsFile;
import qlab.engine.testing.Fixtures;
import qlab.quant.checkpoint.QuantPlan;
import qlab.quant.ggml.GgmlType;
import qlab.quant.ggml.LlamaRecipe;

/**
 * The per-tensor types of every named recipe, with and without an importance matrix, against what
 * llama-quantize chose for the fixture model (../shared/fixtures/ggml/recipes: tiny-k, a Qwen2 of
 * 2 layers, 6 heads over 2 KV heads, tied embeddings, rows of 384 and 768), including which
 * tensors fell back and the file type it wrote.
 */
class LlamaRecipeTest {
    private static final LlamaRecipe.ModelShape TINY_K = new LlamaRecipe.ModelShape(2, 6, 2, true);

    static Stream<Path> recipeFiles() throws IOException {
        Path dir = Fixtures.ggml("recipes");
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.toString().endsWith(".json")).sorted().toList().stream();
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("recipeFiles")
    void typesEqualLlamaQuantize(Path file) {
        JsonNode r = Fixtures.json(file);
        LlamaRecipe recipe = LlamaRecipe.byName(r.get("named_type").asText()).orElseThrow();
        boolean importance = !r.get("imatrix").isNull();
        assertEquals(recipe.fileType, r.get("metadata").get("general.file_type").asInt(), "file type");
        int matrices = 0;
        int fallbacks = 0;
        for (JsonNode t : r.get("tensors")) {
            String name = t.get("name").asText();
            var kind = LlamaRecipe.Kind.ofGgufName(name);
            if (t.get("ne").size() != 2) {
                assertTrue(kind.isEmpty(), name);
                continue;
            }
            LlamaRecipe.Choice c = recipe.typeFor(kind.orElseThrow(), LlamaRecipe.layerOf(name),
                    t.get("ne").get(0).asLong(), TINY_K, importance);
            assertEquals(GgmlType.valueOf(t.get("type").asText()), c.type(), file.getFileName() + " " + name);
            matrices++;
            fallbacks += c.fellBack() ? 1 : 0;
        }
        assertEquals(15, matrices);
        long warned = 0;
        for (JsonNode line : r.get("fallback_lines")) {
            warned += line.asText().contains("falling back") ? 1 : 0;
        }
        assertEquals(warned, fallbacks, file.getFileName() + ": tensors that fell back");
    }

    /** The Hugging Face name of a GGUF weight of tiny-k. */
    private static String hfName(String gguf) {
        if (gguf.equals("token_embd.weight")) {
            return "model.embed_tokens.weight";
        }
        int layer = LlamaRecipe.layerOf(gguf);
        String part = gguf.substring(gguf.indexOf('.', 4) + 1);
        String hf = switch (part) {
            case "attn_q.weight" -> "self_attn.q_proj.weight";
            case "attn_k.weight" -> "self_attn.k_proj.weight";
            case "attn_v.weight" -> "self_attn.v_proj.weight";
            case "attn_output.weight" -> "self_attn.o_proj.weight";
            case "ffn_gate.weight" -> "mlp.gate_proj.weight";
            case "ffn_up.weight" -> "mlp.up_proj.weight";
            case "ffn_down.weight" -> "mlp.down_proj.weight";
            default -> throw new AssertionError(gguf);
        };
        return "model.layers." + layer + "." + hf;
    }

    /**
     * A recipe as a plan on tiny-k's config: every matrix gets the format named as its llama.cpp
     * type, with llama.cpp's stored size; and every matrix, quantized from the same F16 weights
     * (with the fixture's importance weights where llama-quantize had them) and written as ggml's
     * blocks by its format's codec, has the sha256 of llama-quantize's tensor.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("recipeFiles")
    void planAssignsAndQuantizesAsLlamaQuantize(Path file) throws Exception {
        JsonNode r = Fixtures.json(file);
        String recipe = r.get("named_type").asText();
        boolean importance = !r.get("imatrix").isNull();
        Path tinyK = Fixtures.ggml("models", "tiny-k");
        ModelConfig config = ModelConfig.read(tinyK);
        QuantPlan plan = QuantPlan.parse(recipe);
        assertEquals(recipe, plan.toString());
        java.util.Map<String, QuantPlan.Assignment> byName = new java.util.HashMap<>();
        for (QuantPlan.Assignment a : plan.explain(config, importance)) {
            byName.put(a.tensor(), a);
        }
        assertEquals(15, byName.size());
        JsonNode imatrix = importance ? Fixtures.json(Fixtures.ggml("imatrix", "tiny-k.imatrix.json")).get("entries") : null;
        SafetensorsFile weights = SafetensorsFile.open(tinyK.resolve("model.safetensors"));
        java.security.MessageDigest sha = java.security.MessageDigest.getInstance("SHA-256");
        int hashed = 0;
        for (JsonNode t : r.get("tensors")) {
            String name = t.get("name").asText();
            if (t.get("ne").size() != 2) {
                continue;
            }
            QuantPlan.Assignment a = byName.get(hfName(name));
            String type = t.get("type").asText();
            assertEquals(type.toLowerCase(java.util.Locale.ROOT), a.format().format(), name);
            assertEquals(t.get("n_bytes").asLong(), a.bytes(), name + " bytes");
            QuantFormat format = a.format().resolve();
            var codec = format.ggml().orElseThrow(() -> new AssertionError(a.format() + " has no ggml codec"));
            float[] x = weights.floats(hfName(name));
            int cols = (int) a.cols();
            float[] qw = null;
            if (imatrix != null && imatrix.has(name)) {
                JsonNode v = imatrix.get(name).get("quantize_weights_from_gguf");
                qw = new float[v.size()];
                for (int i = 0; i < qw.length; i++) {
                    qw[i] = (float) v.get(i).asDouble();
                }
            }
            java.lang.foreign.MemorySegment mine = RowCases.quantize(format, rows(x, (int) a.rows(), cols), cols, qw, 0);
            long ggmlRow = codec.type().rowBytes(cols);
            java.lang.foreign.MemorySegment blocks = java.lang.foreign.Arena.ofAuto().allocate(a.rows() * ggmlRow);
            for (long row = 0; row < a.rows(); row++) {
                codec.toGgml(mine, row * format.bytesPerRow(cols), cols, blocks, row * ggmlRow);
            }
            String hex = java.util.HexFormat.of().formatHex(sha.digest(blocks.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE)));
            assertEquals(t.get("sha256").asText(), hex, file.getFileName() + " " + name + " (" + type + ") sha256");
            hashed++;
        }
        assertEquals(15, hashed);
    }

    private static float[][] rows(float[] x, int rows, int cols) {
        float[][] out = new float[rows][];
        for (int r = 0; r < rows; r++) {
            out[r] = java.util.Arrays.copyOfRange(x, r * cols, (r + 1) * cols);
        }
        return out;
    }

    @Test
    void recipePlansNeedTheModel() {
        QuantPlan p = QuantPlan.parse("Q4_K_M+attn=q8_0");
        assertEquals("Q4_K_M+attn-qkv=q8_0+attn-o=q8_0", p.toString());
        assertEquals("q8_0", p.choiceFor("model.layers.0.self_attn.v_proj.weight").format());
        assertThrows(IllegalStateException.class, () -> p.choiceFor("model.layers.0.mlp.down_proj.weight"));
        // llama-quantize's spelling in any case, where no format has the name; q6_K is both Q6_K and q6_k.
        assertEquals("Q4_K_M", QuantPlan.parse("q4_k_m").toString());
        assertEquals("q6_k", QuantPlan.parse("q6_k").toString());
        assertEquals("Q6_K", QuantPlan.parse("Q6_K").toString());
        assertThrows(QlabException.class, () -> QuantPlan.parse("q6_K"));
    }

    @Test
    void largerModelsTakeTheLayerRules() {
        // 24 layers, 14 heads over 2 KV heads (Qwen2.5-0.5B): use_more_bits picks layers 0-2, 21-23
        // and every third layer from 5; Q4_K_M gives them Q6_K.
        LlamaRecipe.ModelShape qwen = new LlamaRecipe.ModelShape(24, 14, 2, true);
        List<Integer> more = new java.util.ArrayList<>();
        for (int i = 0; i < 24; i++) {
            if (LlamaRecipe.Q4_K_M.typeFor(LlamaRecipe.Kind.FFN_DOWN, i, 4864, qwen, false).type() == GgmlType.Q6_K) {
                more.add(i);
            }
        }
        assertEquals(List.of(0, 1, 2, 5, 8, 11, 14, 17, 20, 21, 22, 23), more);
        // attn_v rows of 896 take Q6_K's fallback
        assertEquals(GgmlType.Q8_0, LlamaRecipe.Q4_K_M.typeFor(LlamaRecipe.Kind.ATTN_V, 0, 896, qwen, false).type());
        // a group-query ratio of 7 gives IQ4_XS's attn_v Q5_K (here its fallback Q5_1)
        assertEquals(GgmlType.Q5_K, LlamaRecipe.IQ4_XS.typeFor(LlamaRecipe.Kind.ATTN_V, 3, 896, qwen, false).chosen());
        // the IQ4 ffn_down rule, only without importance: layers 0-2 of 24
        assertEquals(GgmlType.Q5_K, LlamaRecipe.IQ4_NL.typeFor(LlamaRecipe.Kind.FFN_DOWN, 2, 4864, qwen, false).type());
        assertEquals(GgmlType.IQ4_NL, LlamaRecipe.IQ4_NL.typeFor(LlamaRecipe.Kind.FFN_DOWN, 2, 4864, qwen, true).type());
        // an untied embedding keeps the default type
        LlamaRecipe.ModelShape untied = new LlamaRecipe.ModelShape(24, 14, 2, false);
        assertEquals(GgmlType.Q4_K, LlamaRecipe.Q4_K_M.typeFor(LlamaRecipe.Kind.TOKEN_EMBD, -1, 1024, untied, false).type());
        assertEquals(GgmlType.Q6_K, LlamaRecipe.Q4_K_M.typeFor(LlamaRecipe.Kind.OUTPUT, -1, 1024, untied, false).type());
    }

    @Test
    void namesAndErrors() {
        assertEquals(LlamaRecipe.Q4_K_M, LlamaRecipe.byName("Q4_K_M").orElseThrow());
        assertFalse(LlamaRecipe.byName("q4_k_m").isPresent());
        assertEquals(12, LlamaRecipe.layerOf("blk.12.attn_v.weight"));
        assertEquals(3, LlamaRecipe.layerOf("model.layers.3.mlp.down_proj.weight"));
        assertEquals(-1, LlamaRecipe.layerOf("token_embd.weight"));
        assertEquals(GgmlType.F16, LlamaRecipe.Q4_K_M.typeFor(LlamaRecipe.Kind.ATTN_Q, 0, 48, TINY_K, false).type());
        QlabException e = assertThrows(QlabException.class,
                () -> LlamaRecipe.Q4_0.typeFor(LlamaRecipe.Kind.ATTN_Q, 0, 40, TINY_K, false));
        assertTrue(e.getMessage().contains("no fallback for Q4_0"), e.getMessage());
    }
}
