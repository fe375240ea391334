package qlab.engine.model;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The tensors a Qwen2 checkpoint must hold, derived from the config alone, so a file can be
 * checked against what the architecture needs rather than trusted.
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
            m.put(layer(i, "self_attn.q_proj.weight"), new long[] {c.qDim(), h});
            m.put(layer(i, "self_attn.q_proj.bias"), new long[] {c.qDim()});
            m.put(layer(i, "self_attn.k_proj.weight"), new long[] {c.kvDim(), h});
            m.put(layer(i, "self_attn.k_proj.bias"), new long[] {c.kvDim()});
            m.put(layer(i, "self_attn.v_proj.weight"), new long[] {c.kvDim(), h});
            m.put(layer(i, "self_attn.v_proj.bias"), new long[] {c.kvDim()});
            m.put(layer(i, "self_attn.o_proj.weight"), new long[] {h, c.qDim()});
            m.put(layer(i, "post_attention_layernorm.weight"), new long[] {h});
            m.put(layer(i, "mlp.gate_proj.weight"), new long[] {c.intermediateSize(), h});
            m.put(layer(i, "mlp.up_proj.weight"), new long[] {c.intermediateSize(), h});
            m.put(layer(i, "mlp.down_proj.weight"), new long[] {h, c.intermediateSize()});
        }
        m.put(FINAL_NORM, new long[] {h});
        if (!c.tieWordEmbeddings()) {
            m.put(LM_HEAD, new long[] {c.vocabSize(), h});
        }
        return new ModelManifest(m);
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
