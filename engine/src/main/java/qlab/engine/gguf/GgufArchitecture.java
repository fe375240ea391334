package qlab.engine.gguf;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import qlab.engine.model.ModelConfig;
import qlab.engine.model.ModelFamily;

/**
 * How one llama.cpp architecture ({@code general.architecture}) maps onto qlab's model: the model
 * family it runs as, the tensor names on both sides, and the row order llama.cpp's converter gives
 * the q and k projections. Hyperparameters are read by {@link GgufModelConfig} under the
 * architecture's prefix ({@code llama.block_count}, ...), the same keys for every architecture here.
 *
 * @param name the value of {@code general.architecture}
 * @param family the qlab (Hugging Face) model family the file runs as
 * @param global tensors outside the layers: llama.cpp name to qlab (Hugging Face) name
 * @param perLayer tensors of layer N: llama.cpp's {@code blk.N.<key>} to qlab's {@code model.layers.N.<value>}
 * @param interleavedRope whether q and k rows are stored in GGML's interleaved RoPE order (llama;
 *     see {@link #ggufRowOrder}) rather than transformers' rotate-half order (qwen2, qwen3)
 */
public record GgufArchitecture(String name, ModelFamily family, Map<String, String> global, Map<String, String> perLayer,
        boolean interleavedRope) {

    /** llama.cpp's per-frequency RoPE divisors (llama3 scaling); a hyperparameter, not a weight. */
    public static final String ROPE_FREQS = "rope_freqs.weight";

    private static final String[] ATTENTION = {
        "attn_norm.weight", "input_layernorm.weight",
        "attn_q.weight", "self_attn.q_proj.weight",
        "attn_k.weight", "self_attn.k_proj.weight",
        "attn_v.weight", "self_attn.v_proj.weight",
        "attn_output.weight", "self_attn.o_proj.weight"};
    private static final String[] QKV_BIASES = {
        "attn_q.bias", "self_attn.q_proj.bias",
        "attn_k.bias", "self_attn.k_proj.bias",
        "attn_v.bias", "self_attn.v_proj.bias"};
    private static final String[] MLP = {
        "ffn_norm.weight", "post_attention_layernorm.weight",
        "ffn_gate.weight", "mlp.gate_proj.weight",
        "ffn_up.weight", "mlp.up_proj.weight",
        "ffn_down.weight", "mlp.down_proj.weight"};
    private static final Map<String, String> GLOBAL = ordered(
            "token_embd.weight", "model.embed_tokens.weight",
            "output_norm.weight", "model.norm.weight",
            "output.weight", "lm_head.weight");

    public static final GgufArchitecture QWEN2 = new GgufArchitecture("qwen2", ModelFamily.QWEN2, GLOBAL,
            ordered(ATTENTION, QKV_BIASES, MLP), false);

    /** llama.cpp's llama loader takes q/k/v/o and gate/up/down biases as optional tensors. */
    public static final GgufArchitecture LLAMA = new GgufArchitecture("llama", ModelFamily.LLAMA, GLOBAL,
            ordered(ATTENTION, QKV_BIASES, new String[] {"attn_output.bias", "self_attn.o_proj.bias"}, MLP,
                    new String[] {
                        "ffn_gate.bias", "mlp.gate_proj.bias",
                        "ffn_up.bias", "mlp.up_proj.bias",
                        "ffn_down.bias", "mlp.down_proj.bias"}), true);

    /** llama.cpp's qwen3 loader has no projection biases. */
    public static final GgufArchitecture QWEN3 = new GgufArchitecture("qwen3", ModelFamily.QWEN3, GLOBAL,
            ordered(ATTENTION, new String[] {
                "attn_q_norm.weight", "self_attn.q_norm.weight",
                "attn_k_norm.weight", "self_attn.k_norm.weight"}, MLP), false);

    /** The architectures qlab runs. */
    public static final List<GgufArchitecture> ALL = List.of(QWEN2, LLAMA, QWEN3);

    private static final String LAYER_PREFIX = "model.layers.";

    public static Optional<GgufArchitecture> byName(String name) {
        return ALL.stream().filter(a -> a.name.equals(name)).findFirst();
    }

    /** The architecture a model family is written as. */
    public static GgufArchitecture of(ModelFamily family) {
        return ALL.stream().filter(a -> a.family == family).findFirst().orElseThrow();
    }

    /**
     * The GGUF row order of a tensor, or empty when the file stores its rows as qlab does: row
     * {@code r} of the GGUF tensor is row {@code order[r]} of the Hugging Face tensor. For llama,
     * llama.cpp's converter reorders the rows of q and k (weights and biases) within each head from
     * transformers' rotate-half layout (first half of the pairs, then second half) to GGML's
     * interleaved one (pair by pair), since its RoPE rotates adjacent elements.
     */
    public Optional<int[]> ggufRowOrder(String qlabName, ModelConfig c) {
        if (!interleavedRope) {
            return Optional.empty();
        }
        if (qlabName.endsWith("self_attn.q_proj.weight") || qlabName.endsWith("self_attn.q_proj.bias")) {
            return Optional.of(interleavedRows(c.numHeads(), c.headDim()));
        }
        if (qlabName.endsWith("self_attn.k_proj.weight") || qlabName.endsWith("self_attn.k_proj.bias")) {
            return Optional.of(interleavedRows(c.numKvHeads(), c.headDim()));
        }
        return Optional.empty();
    }

    /**
     * GGUF row {@code h*d + 2j + t} of a head holds transformers' row {@code h*d + t*d/2 + j}
     * (head h, pair j, member t of the pair).
     */
    static int[] interleavedRows(int heads, int headDim) {
        int half = headDim / 2;
        int[] order = new int[heads * headDim];
        for (int h = 0; h < heads; h++) {
            for (int j = 0; j < half; j++) {
                for (int t = 0; t < 2; t++) {
                    order[h * headDim + 2 * j + t] = h * headDim + t * half + j;
                }
            }
        }
        return order;
    }

    /** Rows of a row-major [rows, cols] matrix in GGUF order ({@code toGguf}) or back in qlab's. */
    public static float[] reorderRows(float[] values, int cols, int[] order, boolean toGguf) {
        float[] out = new float[values.length];
        for (int r = 0; r < order.length; r++) {
            int from = toGguf ? order[r] : r;
            int to = toGguf ? r : order[r];
            System.arraycopy(values, from * cols, out, to * cols, cols);
        }
        return out;
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
        return ordered(new String[][] {pairs});
    }

    private static Map<String, String> ordered(String[]... groups) {
        Map<String, String> m = new LinkedHashMap<>();
        for (String[] pairs : groups) {
            for (int i = 0; i < pairs.length; i += 2) {
                m.put(pairs[i], pairs[i + 1]);
            }
        }
        return java.util.Collections.unmodifiableMap(m);
    }
}
