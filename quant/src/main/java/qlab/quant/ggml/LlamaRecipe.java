package qlab.quant.ggml;

import java.util.Arrays;
import java.util.Optional;
import java.util.stream.Collectors;
import qlab.engine.QlabException;

/**
 * llama-quantize's named types (its {@code llama_ftype}s): a default ggml type, and the rules by
 * which llama.cpp gives some tensors another type (llama-quant.cpp, {@code llama_tensor_get_type}),
 * for dense models: the output projection (and a tied token embedding) get Q6_K, or Q8_0 when
 * their rows do not hold whole blocks of the default type; {@code attn_v}, {@code ffn_down} and
 * {@code attn_output} get more bits in some recipes, by layer position ({@link #useMoreBits}),
 * layer count and the query/key-value head ratio. A type whose block does not divide the row width
 * is then replaced by its fallback (Q2_K, Q3_K → Q4_0; Q4_K → Q5_0; Q5_K → Q5_1; Q6_K → Q8_0;
 * IQ4_XS → IQ4_NL), and by F16 when even that does not fit. Rules for mixture-of-experts models,
 * Falcon and the 70B Llama are not modelled.
 */
public enum LlamaRecipe {
    Q4_0(2, GgmlType.Q4_0),
    Q4_1(3, GgmlType.Q4_1),
    Q5_0(8, GgmlType.Q5_0),
    Q5_1(9, GgmlType.Q5_1),
    Q8_0(7, GgmlType.Q8_0),
    Q2_K(10, GgmlType.Q2_K),
    Q3_K_S(11, GgmlType.Q3_K),
    Q3_K_M(12, GgmlType.Q3_K),
    Q3_K_L(13, GgmlType.Q3_K),
    Q4_K_S(14, GgmlType.Q4_K),
    Q4_K_M(15, GgmlType.Q4_K),
    Q5_K_S(16, GgmlType.Q5_K),
    Q5_K_M(17, GgmlType.Q5_K),
    Q6_K(18, GgmlType.Q6_K),
    IQ4_NL(25, GgmlType.IQ4_NL),
    IQ4_XS(30, GgmlType.IQ4_XS);

    /** The {@code general.file_type} llama-quantize writes for this recipe. */
    public final int fileType;
    /** The type of every tensor no rule picks out. */
    public final GgmlType defaultType;

    LlamaRecipe(int fileType, GgmlType defaultType) {
        this.fileType = fileType;
        this.defaultType = defaultType;
    }

    /** The weight matrices llama.cpp's rules tell apart. */
    public enum Kind {
        TOKEN_EMBD, OUTPUT, ATTN_Q, ATTN_K, ATTN_V, ATTN_OUTPUT, FFN_GATE, FFN_UP, FFN_DOWN;

        /** The kind of a GGUF tensor name ({@code blk.3.attn_v.weight}), or empty for norms, biases and others. */
        public static Optional<Kind> ofGgufName(String name) {
            return of(name, "token_embd.weight", "output.weight", "blk.", new String[] {"attn_q.weight", "attn_k.weight",
                "attn_v.weight", "attn_output.weight", "ffn_gate.weight", "ffn_up.weight", "ffn_down.weight"});
        }

        /** The kind of a Hugging Face weight name ({@code model.layers.3.self_attn.v_proj.weight}), or empty. */
        public static Optional<Kind> ofHfName(String name) {
            return of(name, "model.embed_tokens.weight", "lm_head.weight", "model.layers.", new String[] {"q_proj.weight",
                "k_proj.weight", "v_proj.weight", "o_proj.weight", "gate_proj.weight", "up_proj.weight", "down_proj.weight"});
        }

        /** layerSuffixes name ATTN_Q … FFN_DOWN in declaration order. */
        private static Optional<Kind> of(String name, String embedding, String output, String layerPrefix,
                                         String[] layerSuffixes) {
            if (name.equals(embedding)) {
                return Optional.of(TOKEN_EMBD);
            }
            if (name.equals(output)) {
                return Optional.of(OUTPUT);
            }
            for (int i = 0; i < layerSuffixes.length; i++) {
                if (name.startsWith(layerPrefix) && name.endsWith("." + layerSuffixes[i])) {
                    return Optional.of(values()[ATTN_Q.ordinal() + i]);
                }
            }
            return Optional.empty();
        }
    }

    /** The layer index in a GGUF ({@code blk.N.}) or Hugging Face ({@code model.layers.N.}) name; −1 for none. */
    public static int layerOf(String name) {
        String rest = name.startsWith("blk.") ? name.substring(4)
                : name.startsWith("model.layers.") ? name.substring(13) : null;
        if (rest == null || rest.indexOf('.') < 1) {
            return -1;
        }
        try {
            return Integer.parseInt(rest.substring(0, rest.indexOf('.')));
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** What the rules read about the model. */
    public record ModelShape(int layers, int heads, int kvHeads, boolean tiedEmbeddings) {
        int gqa() {
            return heads / kvHeads;
        }
    }

    /**
     * One tensor's type: {@code chosen} by the mixture rules, {@code type} what is stored (the
     * fallback when the chosen type's block does not divide the row width).
     */
    public record Choice(GgmlType chosen, GgmlType type) {
        public boolean fellBack() {
            return chosen != type;
        }
    }

    /** The recipe named {@code name} as llama-quantize spells it (Q4_K_M, IQ4_XS, …), if there is one. */
    public static Optional<LlamaRecipe> byName(String name) {
        return Arrays.stream(values()).filter(r -> r.name().equals(name)).findFirst();
    }

    /** The recipe whose name equals {@code name} ignoring case, as llama-quantize reads it ({@code q4_k_m}). */
    public static Optional<LlamaRecipe> byNameIgnoringCase(String name) {
        return Arrays.stream(values()).filter(r -> r.name().equalsIgnoreCase(name)).findFirst();
    }

    /** Every recipe name, comma-separated. */
    public static String names() {
        return Arrays.stream(values()).map(Enum::name).collect(Collectors.joining(", "));
    }

    /**
     * llama.cpp's use_more_bits: the first and last eighth of the layers, and every third layer
     * in between.
     */
    static boolean useMoreBits(int layer, int layers) {
        return layer < layers / 8 || layer >= 7 * layers / 8 || (layer - layers / 8) % 3 == 2;
    }

    /**
     * The type llama-quantize gives a weight matrix of this kind in layer {@code layer} (−1 outside
     * the layers) whose rows hold {@code rowWidth} values.
     *
     * @param importance whether an importance matrix is used (it changes the IQ4 and Q4_0/Q5_0 rules)
     * @throws QlabException when neither the type nor its fallback fits and llama.cpp defines no fallback
     */
    public Choice typeFor(Kind kind, int layer, long rowWidth, ModelShape model, boolean importance) {
        GgmlType chosen = mixture(kind, layer, rowWidth, model, importance);
        return new Choice(chosen, fallback(chosen, rowWidth));
    }

    private GgmlType mixture(Kind kind, int layer, long rowWidth, ModelShape m, boolean importance) {
        GgmlType t = defaultType;
        int n = m.layers();
        if (kind == Kind.OUTPUT || kind == Kind.TOKEN_EMBD && m.tiedEmbeddings()) {
            if (rowWidth % t.blockSize != 0) {
                return GgmlType.Q8_0;
            }
            return t == GgmlType.Q8_0 ? t : GgmlType.Q6_K;
        }
        switch (kind) {
            case ATTN_V -> {
                if (this == Q2_K) {
                    t = m.gqa() >= 4 ? GgmlType.Q4_K : GgmlType.Q3_K;
                } else if (this == Q3_K_M) {
                    t = layer < 2 ? GgmlType.Q5_K : GgmlType.Q4_K;
                } else if (this == Q3_K_L) {
                    t = GgmlType.Q5_K;
                } else if ((this == IQ4_NL || this == IQ4_XS) && m.gqa() >= 4) {
                    t = GgmlType.Q5_K;
                } else if ((this == Q4_K_M || this == Q5_K_M) && useMoreBits(layer, n)) {
                    t = GgmlType.Q6_K;
                } else if (this == Q4_K_S && layer < 4) {
                    t = GgmlType.Q5_K;
                }
            }
            case FFN_DOWN -> {
                if (this == Q2_K) {
                    t = GgmlType.Q3_K;
                } else if (this == Q3_K_M) {
                    t = layer < n / 16 ? GgmlType.Q5_K : GgmlType.Q4_K;
                } else if (this == Q3_K_L) {
                    t = GgmlType.Q5_K;
                } else if (this == Q4_K_M) {
                    if (useMoreBits(layer, n)) {
                        t = GgmlType.Q6_K;
                    }
                } else if (layer < n / 8 && (this == IQ4_NL || this == IQ4_XS) && !importance) {
                    t = GgmlType.Q5_K;
                } else if (this == Q5_K_M && useMoreBits(layer, n)) {
                    t = GgmlType.Q6_K;
                } else if (this == Q4_K_S && layer < n / 8) {
                    t = GgmlType.Q5_K;
                } else if ((this == Q4_0 || this == Q5_0) && importance && layer < n / 8) {
                    t = this == Q4_0 ? GgmlType.Q4_1 : GgmlType.Q5_1;
                }
            }
            case ATTN_OUTPUT -> {
                if (this == Q2_K) {
                    t = GgmlType.Q3_K;
                } else if (this == Q3_K_M) {
                    t = GgmlType.Q4_K;
                } else if (this == Q3_K_L) {
                    t = GgmlType.Q5_K;
                }
            }
            default -> {
            }
        }
        return t;
    }

    /** llama.cpp's tensor_type_fallback: the type itself when its block divides the row width. */
    static GgmlType fallback(GgmlType t, long rowWidth) {
        if (rowWidth % t.blockSize == 0) {
            return t;
        }
        GgmlType f = switch (t) {
            case IQ4_XS -> GgmlType.IQ4_NL;
            case Q2_K, Q3_K -> GgmlType.Q4_0;
            case Q4_K -> GgmlType.Q5_0;
            case Q5_K -> GgmlType.Q5_1;
            case Q6_K -> GgmlType.Q8_0;
            default -> throw new QlabException("rows of " + rowWidth + " values do not hold whole " + t
                    + " blocks of " + t.blockSize + ", and llama.cpp defines no fallback for " + t);
        };
        return rowWidth % f.blockSize == 0 ? f : GgmlType.F16;
    }
}
