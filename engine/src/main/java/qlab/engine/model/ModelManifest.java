package qlab.engine.model;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The tensors a checkpoint must hold, derived from the config alone (its sizes and which biases
 * and norms its family has), so a file can be checked against what the architecture needs rather
 * than trusted.
 */
public record ModelManifest(Map<String, long[]> expected) {

    public static final String EMBED = "model.embed_tokens.weight";
    public static final String FINAL_NORM = "model.norm.weight";
    public static final String LM_HEAD = "lm_head.weight";

    public static String layer(int i, String suffix) {
        return "model.layers." + i + "." + suffix;
    }

    public static ModelManifest of(ModelConfig c) {
        Map<String, long[]> m = new LinkedHashMap<>();
        long h = c.hiddenSize();
        m.put(EMBED, new long[] {c.vocabSize(), h});
        for (int i = 0; i < c.numLayers(); i++) {
            m.put(layer(i, "input_layernorm.weight"), new long[] {h});
            linear(m, layer(i, "self_attn.q_proj"), c.qDim(), h, c.qkvBias());
            linear(m, layer(i, "self_attn.k_proj"), c.kvDim(), h, c.qkvBias());
            linear(m, layer(i, "self_attn.v_proj"), c.kvDim(), h, c.qkvBias());
            if (c.qkNorm()) {
                m.put(layer(i, "self_attn.q_norm.weight"), new long[] {c.headDim()});
                m.put(layer(i, "self_attn.k_norm.weight"), new long[] {c.headDim()});
            }
            linear(m, layer(i, "self_attn.o_proj"), h, c.qDim(), c.oBias());
            m.put(layer(i, "post_attention_layernorm.weight"), new long[] {h});
            linear(m, layer(i, "mlp.gate_proj"), c.intermediateSize(), h, c.mlpBias());
            linear(m, layer(i, "mlp.up_proj"), c.intermediateSize(), h, c.mlpBias());
            linear(m, layer(i, "mlp.down_proj"), h, c.intermediateSize(), c.mlpBias());
        }
        m.put(FINAL_NORM, new long[] {h});
        if (!c.tieWordEmbeddings()) {
            m.put(LM_HEAD, new long[] {c.vocabSize(), h});
        }
        return new ModelManifest(m);
    }

    private static void linear(Map<String, long[]> m, String prefix, long out, long in, boolean bias) {
        m.put(prefix + ".weight", new long[] {out, in});
        if (bias) {
            m.put(prefix + ".bias", new long[] {out});
        }
    }

    /** What is wrong with a file's tensor set, one line per problem; empty when it matches. */
    public List<String> problems(Map<String, long[]> actual) {
        List<String> out = new ArrayList<>();
        for (var e : expected.entrySet()) {
            long[] got = actual.get(e.getKey());
            if (got == null) {
                out.add("missing tensor " + e.getKey() + " " + Arrays.toString(e.getValue()));
            } else if (!Arrays.equals(got, e.getValue())) {
                out.add("tensor " + e.getKey() + " has shape " + Arrays.toString(got)
                        + ", expected " + Arrays.toString(e.getValue()));
            }
        }
        Set<String> known = expected.keySet();
        for (String name : actual.keySet()) {
            if (!known.contains(name)) {
                out.add("unexpected tensor " + name + " " + Arrays.toString(actual.get(name)));
            }
        }
        return out;
    }
}
