package qlab.engine.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;
import qlab.engine.QlabException;
import qlab.engine.synthetic.SyntheticPreset;
import qlab.engine.testing.Fixtures;
import qlab.engine.testing.TestModels;

class ModelConfigTest {

    private static ObjectNode valid() throws Exception {
        return (ObjectNode) new ObjectMapper().readTree(SyntheticPreset.QWEN25_05B.config().toJson());
    }

    @Test
    void roundTripsAndCountsTheTargetModel() throws Exception {
        ModelConfig c = ModelConfig.parse(valid().toString());
        assertEquals(SyntheticPreset.QWEN25_05B.config(), c);
        assertEquals(494_032_768L, c.parameterCount());
        assertEquals(7, c.groupSize());
    }

    @ParameterizedTest
    @ValueSource(strings = {"hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
        "num_key_value_heads", "vocab_size", "rms_norm_eps", "rope_theta", "model_type"})
    void aMissingFieldIsNamed(String field) throws Exception {
        ObjectNode n = valid();
        n.remove(field);
        QlabException e = assertThrows(QlabException.class, () -> ModelConfig.parse(n.toString()));
        assertTrue(e.getMessage().contains("\"" + field + "\""), e.getMessage());
    }

    @Test
    void hiddenNotDivisibleByHeads() throws Exception {
        ObjectNode n = valid();
        n.put("num_attention_heads", 13);
        QlabException e = assertThrows(QlabException.class, () -> ModelConfig.parse(n.toString()));
        assertTrue(e.getMessage().contains("hidden_size") && e.getMessage().contains("13"), e.getMessage());
    }

    @Test
    void kvHeadsMustDivideHeads() throws Exception {
        ObjectNode n = valid();
        n.put("num_key_value_heads", 3);
        QlabException e = assertThrows(QlabException.class, () -> ModelConfig.parse(n.toString()));
        assertTrue(e.getMessage().contains("num_key_value_heads"), e.getMessage());
    }

    @Test
    void readsTheRopeBaseFromEitherConfigLayout() throws Exception {
        ObjectNode v4 = valid();
        v4.put("rope_theta", 10000.0);
        v4.putObject("rope_scaling").put("rope_type", "default");
        assertEquals(10000.0, ModelConfig.parse(v4.toString()).ropeTheta());
        ObjectNode v5 = valid();
        v5.remove("rope_theta");
        v5.putObject("rope_parameters").put("rope_type", "default").put("rope_theta", 500000.0);
        assertEquals(500000.0, ModelConfig.parse(v5.toString()).ropeTheta());
        ObjectNode yarn = valid();
        yarn.remove("rope_theta");
        yarn.putObject("rope_parameters").put("rope_type", "yarn").put("rope_theta", 1e6).put("factor", 4.0);
        QlabException e = assertThrows(QlabException.class, () -> ModelConfig.parse(yarn.toString()));
        assertTrue(e.getMessage().contains("\"rope_parameters\"") && e.getMessage().contains("yarn"), e.getMessage());
        ObjectNode untyped = valid();
        untyped.putObject("rope_scaling").put("factor", 2.0);
        e = assertThrows(QlabException.class, () -> ModelConfig.parse(untyped.toString()));
        assertTrue(e.getMessage().contains("\"rope_scaling\""), e.getMessage());
        ObjectNode neither = valid();
        neither.remove("rope_theta");
        neither.putObject("rope_parameters").put("rope_type", "default");
        e = assertThrows(QlabException.class, () -> ModelConfig.parse(neither.toString()));
        assertTrue(e.getMessage().contains("\"rope_theta\""), e.getMessage());
    }

    @Test
    void wrongTypesAndUnsupportedFeaturesAreNamed() throws Exception {
        ObjectNode a = valid();
        a.put("hidden_size", "896");
        assertTrue(assertThrows(QlabException.class, () -> ModelConfig.parse(a.toString())).getMessage().contains("hidden_size"));
        ObjectNode b = valid();
        b.put("model_type", "mistral");
        assertTrue(assertThrows(QlabException.class, () -> ModelConfig.parse(b.toString())).getMessage().contains("model_type"));
        ObjectNode c = valid();
        c.putObject("rope_scaling").put("type", "yarn");
        assertTrue(assertThrows(QlabException.class, () -> ModelConfig.parse(c.toString())).getMessage().contains("rope_scaling"));
        ObjectNode sliding = valid();
        sliding.putArray("layer_types").add("full_attention").add("sliding_attention");
        assertTrue(assertThrows(QlabException.class, () -> ModelConfig.parse(sliding.toString())).getMessage().contains("layer_types"));
        ObjectNode full = valid();
        full.putArray("layer_types").add("full_attention").add("full_attention");
        assertEquals(SyntheticPreset.QWEN25_05B.config(), ModelConfig.parse(full.toString()));
        ObjectNode d = valid();
        d.put("num_hidden_layers", 0);
        assertTrue(assertThrows(QlabException.class, () -> ModelConfig.parse(d.toString())).getMessage().contains("num_hidden_layers"));
        assertTrue(assertThrows(QlabException.class, () -> ModelConfig.parse("{\"hidden_size\": 8,")).getMessage().startsWith("config.json: not valid JSON"));
    }

    @Test
    void thePresetsHaveTheRealModelsParameterCounts() throws Exception {
        for (SyntheticPreset p : SyntheticPreset.values()) {
            assertEquals(p.config(), ModelConfig.parse(p.config().toJson()), p.id());
        }
        ModelConfig llama = SyntheticPreset.LLAMA32_1B.config();
        assertEquals(ModelFamily.LLAMA, llama.family());
        assertEquals(1_235_814_400L, llama.parameterCount());
        assertEquals(RopeScaling.llama3(32, 1, 4, 8192), llama.ropeScaling());
        ModelConfig qwen3 = SyntheticPreset.QWEN3_06B.config();
        assertEquals(ModelFamily.QWEN3, qwen3.family());
        assertEquals(596_049_920L, qwen3.parameterCount());
        assertEquals(2048, qwen3.qDim()); // 16 heads x 128, twice the hidden size
    }

    @Test
    void readsTheLlamaAndQwen3Fixtures() {
        ModelConfig llama = ModelConfig.read(Fixtures.oracle().resolve("tiny-llama/f32"));
        assertEquals(ModelFamily.LLAMA, llama.family());
        assertEquals(16, llama.headDim()); // no head_dim key: 64 / 4
        assertEquals(RopeScaling.llama3(8, 1, 4, 64), llama.ropeScaling());
        assertTrue(!llama.tieWordEmbeddings() && !llama.qkvBias() && !llama.oBias() && !llama.mlpBias() && !llama.qkNorm());
        ModelConfig qwen3 = ModelConfig.read(Fixtures.oracle().resolve("tiny-qwen3-realvocab"));
        assertEquals(ModelFamily.QWEN3, qwen3.family());
        assertEquals(16, qwen3.headDim()); // given, not 32 / 4
        assertEquals(RopeScaling.NONE, qwen3.ropeScaling());
        assertTrue(qwen3.qkNorm() && !qwen3.qkvBias() && !qwen3.oBias());
        assertEquals(qwen3, ModelConfig.parse(qwen3.toJson()));
        assertEquals(llama, ModelConfig.parse(llama.toJson()));
    }

    @Test
    void llama3ScalingKeepsInterpolatesOrDividesEachFrequency() {
        // tiny-llama's numbers (fixture README section 7): d 16, theta 5e5, original context 64
        RopeScaling s = RopeScaling.llama3(8, 1, 4, 64);
        double[] scaled = s.inverseFrequencies(500_000, 16);
        double[] plain = RopeScaling.NONE.inverseFrequencies(500_000, 16);
        assertEquals(plain[0], scaled[0]); // wavelength 6.3 < 64 / 4: kept
        double smooth = (64 / (2 * Math.PI / plain[1]) - 1) / (4 - 1);
        assertEquals(0.325, smooth, 1e-3); // wavelength 32.4, between 16 and 64
        assertEquals((1 - smooth) * plain[1] / 8 + smooth * plain[1], scaled[1], 1e-18);
        for (int i = 2; i < 8; i++) {
            assertEquals(plain[i] / 8, scaled[i], 0.0, "frequency " + i); // wavelength > 64: divided
        }
        double[] linear = RopeScaling.linear(4).inverseFrequencies(10_000, 8);
        for (int i = 0; i < 4; i++) {
            assertEquals(Math.pow(10_000, -i / 4.0) / 4, linear[i], 1e-15);
        }
    }

    @Test
    void theManifestFollowsTheBiasAndNormFlags() {
        var llama = ModelManifest.of(TestModels.llamaBiases()).expected();
        for (String t : new String[] {"q_proj", "k_proj", "v_proj", "o_proj"}) {
            assertTrue(llama.containsKey(ModelManifest.layer(1, "self_attn." + t + ".bias")), t);
        }
        for (String t : new String[] {"gate_proj", "up_proj", "down_proj"}) {
            assertTrue(llama.containsKey(ModelManifest.layer(1, "mlp." + t + ".bias")), t);
        }
        assertEquals(96, llama.get(ModelManifest.layer(0, "self_attn.q_proj.weight"))[0]); // 4 heads x 24
        var qwen3 = ModelManifest.of(TestModels.qwen3Norms()).expected();
        assertArrayEquals(new long[] {12}, qwen3.get(ModelManifest.layer(0, "self_attn.q_norm.weight")));
        assertArrayEquals(new long[] {12}, qwen3.get(ModelManifest.layer(0, "self_attn.k_norm.weight")));
        assertTrue(!qwen3.containsKey(ModelManifest.layer(0, "self_attn.q_proj.bias")));
        var qwen2 = ModelManifest.of(SyntheticPreset.TINY.config()).expected();
        assertTrue(qwen2.containsKey(ModelManifest.layer(0, "self_attn.q_proj.bias")));
        assertTrue(!qwen2.containsKey(ModelManifest.layer(0, "self_attn.o_proj.bias")));
    }

    private static ObjectNode llama() throws Exception {
        return (ObjectNode) new ObjectMapper().readTree(SyntheticPreset.LLAMA32_1B.config().toJson());
    }

    private static ObjectNode qwen3() throws Exception {
        return (ObjectNode) new ObjectMapper().readTree(SyntheticPreset.QWEN3_06B.config().toJson());
    }

    private static void rejectedNaming(ObjectNode config, String field) {
        QlabException e = assertThrows(QlabException.class, () -> ModelConfig.parse(config.toString()));
        assertTrue(e.getMessage().contains("\"" + field + "\""), e.getMessage());
        assertTrue(!e.getMessage().contains("\n"), e.getMessage());
    }

    @Test
    void whatTheNewFamiliesDoNotImplementFailsNamingTheField() throws Exception {
        ObjectNode dynamic = llama();
        dynamic.putObject("rope_scaling").put("rope_type", "dynamic").put("factor", 2.0);
        rejectedNaming(dynamic, "rope_scaling");
        ObjectNode yarn = qwen3();
        yarn.putObject("rope_scaling").put("rope_type", "yarn").put("factor", 4.0).put("original_max_position_embeddings", 32768);
        rejectedNaming(yarn, "rope_scaling");
        ObjectNode incomplete = llama();
        ((ObjectNode) incomplete.get("rope_scaling")).remove("low_freq_factor");
        rejectedNaming(incomplete, "rope_scaling.low_freq_factor");
        ObjectNode sliding = qwen3();
        sliding.put("use_sliding_window", true);
        rejectedNaming(sliding, "use_sliding_window");
        ObjectNode partial = llama();
        partial.put("partial_rotary_factor", 0.5);
        rejectedNaming(partial, "partial_rotary_factor");
        ObjectNode gelu = qwen3();
        gelu.put("hidden_act", "gelu");
        rejectedNaming(gelu, "hidden_act");
        ObjectNode mistral = llama();
        mistral.put("model_type", "mistral");
        rejectedNaming(mistral, "model_type");
        ObjectNode v5 = llama();
        v5.remove("rope_scaling");
        v5.putObject("rope_parameters").put("rope_type", "llama3").put("rope_theta", 500_000.0).put("factor", 32.0)
                .put("low_freq_factor", 1.0).put("high_freq_factor", 4.0).put("original_max_position_embeddings", 8192);
        assertEquals(SyntheticPreset.LLAMA32_1B.config(), ModelConfig.parse(v5.toString()));
    }
}
