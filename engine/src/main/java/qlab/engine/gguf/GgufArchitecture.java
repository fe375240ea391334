package qlab.engine.gguf;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * How one llama.cpp architecture ({@code general.architecture}) maps onto qlab's model: the
 * tensor names on both sides. Hyperparameters are read by {@link GgufModelConfig} under the
 * architecture's prefix ({@code qwen2.block_count}, ...), the same keys for every architecture
 * here. Another architecture is one more entry in {@link #ALL} with its names as data.
 *
 * @param name the value of {@code general.architecture}
 * @param global tensors outside the layers: llama.cpp name to qlab (Hugging Face) name
 * @param perLayer tensors of layer N: llama.cpp's {@code blk.N.<key>} to qlab's {@code model.layers.N.<value>}
 */
public record GgufArchitecture(String name, Map<String, String> global, Map<String, String> perLayer) {

    public static final GgufArchitecture QWEN2 = new GgufArchitecture("qwen2",
            ordered("token_embd.weight", "model.embed_tokens.weight",
                    "output_norm.weight", "model.norm.weight",
                    "output.weight", "lm_head.weight"),
            ordered("attn_norm.weight", "input_layernorm.weight",
                    "attn_q.weight", "self_attn.q_proj.weight",
                    "attn_q.bias", "self_attn.q_proj.bias",
                    "attn_k.weight", "self_attn.k_proj.weight",
                    "attn_k.bias", "self_attn.k_proj.bias",
                    "attn_v.weight", "self_attn.v_proj.weight",
                    "attn_v.bias", "self_attn.v_proj.bias",
                    "attn_output.weight", "self_attn.o_proj.weight",
                    "ffn_norm.weight", "post_attention_layernorm.weight",
                    "ffn_gate.weight", "mlp.gate_proj.weight",
                    "ffn_up.weight", "mlp.up_proj.weight",
                    "ffn_down.weight", "mlp.down_proj.weight"));

    /** The architectures qlab runs. */
    public static final List<GgufArchitecture> ALL = List.of(QWEN2);

    private static final String LAYER_PREFIX = "model.layers.";

    public static Optional<GgufArchitecture> byName(String name) {
        return ALL.stream().filter(a -> a.name.equals(name)).findFirst();
    }

    /** qlab's name of a llama.cpp tensor, or empty when the architecture has no such tensor. */
    public Optional<String> qlabName(String ggufName) {
        if (global.containsKey(ggufName)) {
            return Optional.of(global.get(ggufName));
        }
        if (ggufName.startsWith("blk.")) {
            int dot = ggufName.indexOf('.', 4);
            if (dot > 4 && ggufName.substring(4, dot).chars().allMatch(Character::isDigit) && dot - 4 < 8) {
                String rest = perLayer.get(ggufName.substring(dot + 1));
                if (rest != null) {
                    return Optional.of(LAYER_PREFIX + Integer.parseInt(ggufName.substring(4, dot)) + "." + rest);
                }
            }
        }
        return Optional.empty();
    }

    /** llama.cpp's name of a qlab tensor, or empty when there is none. */
    public Optional<String> ggufName(String qlabName) {
        for (var e : global.entrySet()) {
            if (e.getValue().equals(qlabName)) {
                return Optional.of(e.getKey());
            }
        }
        if (qlabName.startsWith(LAYER_PREFIX)) {
            int dot = qlabName.indexOf('.', LAYER_PREFIX.length());
            if (dot > LAYER_PREFIX.length()) {
                String layer = qlabName.substring(LAYER_PREFIX.length(), dot);
                String rest = qlabName.substring(dot + 1);
                for (var e : perLayer.entrySet()) {
                    if (e.getValue().equals(rest) && layer.chars().allMatch(Character::isDigit)) {
                        return Optional.of("blk." + layer + "." + e.getKey());
                    }
                }
            }
        }
        return Optional.empty();
    }

    private static Map<String, String> ordered(String... pairs) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            m.put(pairs[i], pairs[i + 1]);
        }
        return java.util.Collections.unmodifiableMap(m);
    }
}
