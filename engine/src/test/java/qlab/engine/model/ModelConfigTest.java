package qlab.engine.model;

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
        b.put("model_type", "llama");
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
}
