package qlab.engine.gguf;

import qlab.engine.QlabException;
import qlab.engine.model.ModelConfig;

/**
 * The model config of a GGUF file, from llama.cpp's hyperparameter keys under the architecture's
 * prefix ({@code <arch>.block_count}, ...). Defaults are llama.cpp's where it has one
 * ({@code rope.freq_base} 10000); a key that changes the arithmetic and has no default is required.
 */
public final class GgufModelConfig {

    private GgufModelConfig() {}

    /** The architecture the file declares, if qlab runs it. */
    public static GgufArchitecture architecture(GgufFile f) {
        String arch = f.string("general.architecture");
        return GgufArchitecture.byName(arch).orElseThrow(() -> new QlabException(f.source()
                + ": field \"general.architecture\" is \"" + arch + "\", qlab runs "
                + GgufArchitecture.ALL.stream().map(GgufArchitecture::name).toList()));
    }

    /**
     * A FLOAT32 hyperparameter as the decimal it was written from (1e-6 stored as f32 reads back
     * as the double 1e-6, not 9.99999997e-7), so the config equals the config.json one.
     */
    private static double decimal(GgufFile f, String key) {
        double v = f.number(key);
        return f.metadata().get(key).type() == GgufValueType.FLOAT32 ? Double.parseDouble(Float.toString((float) v)) : v;
    }

    public static ModelConfig read(GgufFile f) {
        GgufArchitecture a = architecture(f);
        String p = a.name() + ".";
        String scaling = p + "rope.scaling.type";
        if (f.has(scaling) && !f.string(scaling).equals("none")) {
            throw new QlabException(f.source() + ": field \"" + scaling + "\" is \"" + f.string(scaling)
                    + "\"; only the default rotation is supported");
        }
        if (f.has(p + "attention.sliding_window")) {
            throw new QlabException(f.source() + ": field \"" + p + "attention.sliding_window\" is set; sliding-window attention is not supported");
        }
        int hidden = f.positiveInt(p + "embedding_length");
        int heads = f.positiveInt(p + "attention.head_count");
        int kvHeads = f.has(p + "attention.head_count_kv") ? f.positiveInt(p + "attention.head_count_kv") : heads;
        int headDim;
        if (f.has(p + "attention.key_length")) {
            headDim = f.positiveInt(p + "attention.key_length");
            if (f.has(p + "attention.value_length") && f.positiveInt(p + "attention.value_length") != headDim) {
                throw new QlabException(f.source() + ": field \"" + p + "attention.value_length\" differs from "
                        + p + "attention.key_length; only equal key and value widths are supported");
            }
        } else {
            if (hidden % heads != 0) {
                throw new QlabException(f.source() + ": field \"" + p + "embedding_length\" " + hidden
                        + " is not divisible by " + p + "attention.head_count " + heads);
            }
            headDim = hidden / heads;
        }
        GgufTensor embed = f.tensor("token_embd.weight");
        if (embed.ne().length != 2) {
            throw new QlabException(f.source() + ": tensor \"token_embd.weight\": field \"n_dims\" is " + embed.ne().length + ", expected 2");
        }
        long vocab = f.has(p + "vocab_size") ? f.positiveInt(p + "vocab_size") : embed.ne()[1];
        if (vocab <= 0 || vocab > Integer.MAX_VALUE) {
            throw new QlabException(f.source() + ": tensor \"token_embd.weight\": field \"ne[1]\" is " + vocab + ", not a vocabulary size");
        }
        double ropeBase = f.has(p + "rope.freq_base") ? decimal(f, p + "rope.freq_base") : 10000.0;
        String dtype = switch (embed.type().id()) {
            case 1 -> "float16";
            case 30 -> "bfloat16";
            default -> "float32";
        };
        try {
            return new ModelConfig(hidden, f.positiveInt(p + "feed_forward_length"), f.positiveInt(p + "block_count"),
                    heads, kvHeads, headDim, (int) vocab, decimal(f, p + "attention.layer_norm_rms_epsilon"), ropeBase,
                    !f.tensors().containsKey("output.weight"),
                    f.has(p + "context_length") ? f.positiveInt(p + "context_length") : 32768, dtype);
        } catch (QlabException e) {
            throw new QlabException(f.source() + ": " + e.getMessage().replaceFirst("^config\\.json: ", ""));
        }
    }

    /** The hyperparameter metadata llama.cpp's converter writes for {@code c} under architecture {@code a}. */
    public static java.util.Map<String, GgufValue> metadata(GgufArchitecture a, ModelConfig c) {
        String p = a.name() + ".";
        java.util.Map<String, GgufValue> m = new java.util.LinkedHashMap<>();
        m.put(p + "block_count", GgufValue.u32(c.numLayers()));
        m.put(p + "context_length", GgufValue.u32(c.maxPositionEmbeddings()));
        m.put(p + "embedding_length", GgufValue.u32(c.hiddenSize()));
        m.put(p + "feed_forward_length", GgufValue.u32(c.intermediateSize()));
        m.put(p + "attention.head_count", GgufValue.u32(c.numHeads()));
        m.put(p + "attention.head_count_kv", GgufValue.u32(c.numKvHeads()));
        if (c.headDim() * c.numHeads() != c.hiddenSize()) {
            m.put(p + "attention.key_length", GgufValue.u32(c.headDim()));
            m.put(p + "attention.value_length", GgufValue.u32(c.headDim()));
        }
        m.put(p + "rope.freq_base", GgufValue.f32(c.ropeTheta()));
        m.put(p + "attention.layer_norm_rms_epsilon", GgufValue.f32(c.rmsNormEps()));
        return m;
    }
}
