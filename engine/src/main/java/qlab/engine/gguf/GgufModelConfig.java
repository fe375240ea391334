package qlab.engine.gguf;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import qlab.engine.QlabException;
import qlab.engine.model.ModelConfig;
import qlab.engine.model.ModelFamily;
import qlab.engine.model.RopeScaling;

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

    /** Keys whose presence asks for arithmetic qlab does not do (mixture of experts, clamping, soft-capping). */
    private static final List<String> UNSUPPORTED = List.of("expert_count", "attention.clamp_kqv",
            "attention.sliding_window", "final_logit_softcapping", "attn_logit_softcapping", "logit_scale");

    public static ModelConfig read(GgufFile f) {
        GgufArchitecture a = architecture(f);
        String p = a.name() + ".";
        for (String key : UNSUPPORTED) {
            if (f.has(p + key) && !(f.metadata().get(p + key).value() instanceof Number n && n.doubleValue() == 0)) {
                throw new QlabException(f.source() + ": field \"" + p + key + "\" is set; qlab does not compute it");
            }
        }
        // every layer has at least its nine weights: a larger count is corrupt (and would build a huge manifest)
        int layers = f.positiveInt(p + "block_count");
        if (layers > f.tensors().size() / 9) {
            throw new QlabException(f.source() + ": field \"" + p + "block_count\" is " + layers + ", more layers than the file's "
                    + f.tensors().size() + " tensors hold");
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
        if (f.has(p + "rope.dimension_count") && f.positiveInt(p + "rope.dimension_count") != headDim) {
            throw new QlabException(f.source() + ": field \"" + p + "rope.dimension_count\" is "
                    + f.positiveInt(p + "rope.dimension_count") + ", not the head width " + headDim
                    + "; only full rotary embeddings are supported");
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
        RopeScaling scaling = ropeScaling(f, a, ropeBase, headDim);
        String dtype = switch (embed.type().id()) {
            case 1 -> "float16";
            case 30 -> "bfloat16";
            default -> "float32";
        };
        // biases are optional tensors of llama's loader: the file's first layer says whether it has them
        boolean attentionBias = a.family() == ModelFamily.QWEN2 || f.tensors().containsKey("blk.0.attn_q.bias");
        boolean oBias = a.family() == ModelFamily.LLAMA && f.tensors().containsKey("blk.0.attn_output.bias");
        boolean mlpBias = a.family() == ModelFamily.LLAMA && f.tensors().containsKey("blk.0.ffn_gate.bias");
        int context = f.has(p + "context_length") ? f.positiveInt(p + "context_length")
                : a.family() == ModelFamily.LLAMA ? 2048 : 32768;
        try {
            return new ModelConfig(a.family(), hidden, f.positiveInt(p + "feed_forward_length"), layers,
                    heads, kvHeads, headDim, (int) vocab, decimal(f, p + "attention.layer_norm_rms_epsilon"), ropeBase, scaling,
                    !f.tensors().containsKey("output.weight"), context, dtype,
                    attentionBias, oBias, mlpBias, a.family() == ModelFamily.QWEN3);
        } catch (QlabException e) {
            throw new QlabException(f.source() + ": " + e.getMessage().replaceFirst("^config\\.json: ", ""));
        } catch (IllegalArgumentException e) {
            throw new QlabException(f.source() + ": tensors \"blk.0.attn_q.bias\", \"blk.0.attn_output.bias\", \"blk.0.ffn_gate.bias\": "
                    + "a " + a.name() + " model has all attention biases or none");
        }
    }

    /**
     * The RoPE scaling of {@code rope.scaling.type} ({@code linear} with {@code rope.scaling.factor})
     * or of llama's {@code rope_freqs.weight} tensor (llama3 scaling, see {@link #llama3FromFactors}).
     */
    private static RopeScaling ropeScaling(GgufFile f, GgufArchitecture a, double theta, int headDim) {
        String p = a.name() + ".";
        String type = f.has(p + "rope.scaling.type") ? f.string(p + "rope.scaling.type") : "none";
        RopeScaling scaling = switch (type) {
            case "none" -> RopeScaling.NONE;
            case "linear" -> RopeScaling.linear(decimal(f, p + "rope.scaling.factor"));
            default -> throw new QlabException(f.source() + ": field \"" + p + "rope.scaling.type\" is \"" + type
                    + "\"; only \"none\", \"linear\" and llama3 scaling (" + GgufArchitecture.ROPE_FREQS + ") are supported");
        };
        if (f.has(p + "rope.scaling.attn_factor") && f.number(p + "rope.scaling.attn_factor") != 1.0) {
            throw new QlabException(f.source() + ": field \"" + p + "rope.scaling.attn_factor\" is "
                    + f.number(p + "rope.scaling.attn_factor") + "; only 1 is supported");
        }
        if (!f.tensors().containsKey(GgufArchitecture.ROPE_FREQS)) {
            return scaling;
        }
        if (a.family() != ModelFamily.LLAMA || scaling.type() != RopeScaling.Type.NONE) {
            throw new QlabException(f.source() + ": tensor \"" + GgufArchitecture.ROPE_FREQS + "\" is only supported on an unscaled llama model");
        }
        GgufTensor t = f.tensor(GgufArchitecture.ROPE_FREQS);
        if (t.ne().length != 1 || t.ne()[0] != headDim / 2 || !t.type().isFloat()) {
            throw new QlabException(f.source() + ": tensor \"" + GgufArchitecture.ROPE_FREQS + "\": field \"ne\" is "
                    + java.util.Arrays.toString(t.ne()) + " of " + t.type().name() + ", expected [" + headDim / 2 + "] of floats");
        }
        return llama3FromFactors(f.floats(GgufArchitecture.ROPE_FREQS), theta, headDim).orElseThrow(() -> new QlabException(
                f.source() + ": tensor \"" + GgufArchitecture.ROPE_FREQS + "\" holds RoPE divisors that are not llama3 scaling"));
    }

    /**
     * The divisors of each RoPE frequency that llama.cpp's converter writes as {@code rope_freqs.weight}
     * for llama3 scaling (1 for short wavelengths, the factor for long ones, a blend between), so
     * that {@code base^(-2i/d) / divisor[i]} is transformers' scaled inverse frequency.
     */
    public static float[] ropeDivisors(RopeScaling s, double theta, int headDim) {
        double[] unscaled = RopeScaling.NONE.inverseFrequencies(theta, headDim);
        double p = s.originalMaxPositionEmbeddings();
        double lowWavelen = p / s.lowFreqFactor();
        double highWavelen = p / s.highFreqFactor();
        float[] out = new float[unscaled.length];
        for (int i = 0; i < out.length; i++) {
            double wavelen = 2 * Math.PI / unscaled[i];
            if (wavelen < highWavelen) {
                out[i] = 1;
            } else if (wavelen > lowWavelen) {
                out[i] = (float) s.factor();
            } else {
                double smooth = (p / wavelen - s.lowFreqFactor()) / (s.highFreqFactor() - s.lowFreqFactor());
                out[i] = (float) (1 / ((1 - smooth) / s.factor() + smooth));
            }
        }
        return out;
    }

    /**
     * llama3 scaling parameters that give {@code divisors} (within float32 rounding), if there are
     * any. The divisors fix the factor and the two wavelength limits, not the three numbers
     * transformers' config spells them with: {@code low_freq_factor} is taken as 1 (every Llama 3.x
     * config's), {@code high_freq_factor} as 4 when no two blended frequencies fix it, and
     * {@code original_max_position_embeddings} rounded to an integer. Any choice that reproduces the
     * divisors gives the same frequencies.
     */
    public static Optional<RopeScaling> llama3FromFactors(float[] divisors, double theta, int headDim) {
        double factor = 1;
        for (float d : divisors) {
            factor = Math.max(factor, d);
        }
        if (!Double.isFinite(factor)) {
            return Optional.empty();
        }
        if (factor == 1) {
            return allOnes(divisors) ? Optional.of(RopeScaling.NONE) : Optional.empty();
        }
        factor = Double.parseDouble(Float.toString((float) factor));
        double[] unscaled = RopeScaling.NONE.inverseFrequencies(theta, headDim);
        double maxKept = 0;
        double minDivided = Double.POSITIVE_INFINITY;
        List<double[]> blended = new java.util.ArrayList<>(); // {1 / wavelength, smooth}
        for (int i = 0; i < divisors.length; i++) {
            double wavelen = 2 * Math.PI / unscaled[i];
            if (divisors[i] == 1f) {
                maxKept = Math.max(maxKept, wavelen);
            } else if (divisors[i] == (float) factor) {
                minDivided = Math.min(minDivided, wavelen);
            } else {
                blended.add(new double[] {1 / wavelen, (1 / divisors[i] - 1 / factor) / (1 - 1 / factor)});
            }
        }
        double high = 4;
        double original;
        if (blended.size() >= 2) {
            // smooth = original / wavelen / (high - 1) - 1 / (high - 1): a line in 1 / wavelen
            double[] first = blended.get(0);
            double[] last = blended.get(blended.size() - 1);
            double slope = (last[1] - first[1]) / (last[0] - first[0]);
            double intercept = first[1] - slope * first[0];
            high = 1 - 1 / intercept;
            high = Math.abs(high - Math.rint(high)) < 1e-3 ? Math.rint(high) : Double.parseDouble(Float.toString((float) high));
            original = slope * (high - 1);
        } else if (blended.size() == 1) {
            original = (3 * blended.get(0)[1] + 1) / blended.get(0)[0];
        } else {
            // no blended frequency: any original context with every kept wavelength below original / 4
            // and every divided one above original
            original = Math.floor(4 * maxKept) + 1;
            if (!(original < minDivided)) {
                return Optional.empty();
            }
        }
        if (!(original >= 1 && original < Integer.MAX_VALUE && high > 1)) {
            return Optional.empty();
        }
        RopeScaling s = RopeScaling.llama3(factor, 1, high, (int) Math.rint(original));
        float[] again = ropeDivisors(s, theta, headDim);
        for (int i = 0; i < divisors.length; i++) {
            if (Math.abs(again[i] - divisors[i]) > 1e-5 * divisors[i]) {
                return Optional.empty();
            }
        }
        return Optional.of(s);
    }

    private static boolean allOnes(float[] v) {
        for (float x : v) {
            if (x != 1f) {
                return false;
            }
        }
        return true;
    }

    /** The hyperparameter metadata llama.cpp's converter writes for {@code c} under architecture {@code a}. */
    public static Map<String, GgufValue> metadata(GgufArchitecture a, ModelConfig c) {
        String p = a.name() + ".";
        Map<String, GgufValue> m = new LinkedHashMap<>();
        m.put(p + "block_count", GgufValue.u32(c.numLayers()));
        m.put(p + "context_length", GgufValue.u32(c.maxPositionEmbeddings()));
        m.put(p + "embedding_length", GgufValue.u32(c.hiddenSize()));
        m.put(p + "feed_forward_length", GgufValue.u32(c.intermediateSize()));
        m.put(p + "attention.head_count", GgufValue.u32(c.numHeads()));
        m.put(p + "attention.head_count_kv", GgufValue.u32(c.numKvHeads()));
        // the converter writes the widths whenever config.json has head_dim (llama and qwen3 configs do)
        if (c.headDim() * c.numHeads() != c.hiddenSize() || a.family() != ModelFamily.QWEN2) {
            m.put(p + "attention.key_length", GgufValue.u32(c.headDim()));
            m.put(p + "attention.value_length", GgufValue.u32(c.headDim()));
        }
        m.put(p + "rope.freq_base", GgufValue.f32(c.ropeTheta()));
        m.put(p + "attention.layer_norm_rms_epsilon", GgufValue.f32(c.rmsNormEps()));
        if (a.family() == ModelFamily.LLAMA) {
            m.put(p + "vocab_size", GgufValue.u32(c.vocabSize()));
            m.put(p + "rope.dimension_count", GgufValue.u32(c.headDim()));
        }
        if (c.ropeScaling().type() == RopeScaling.Type.LINEAR) {
            m.put(p + "rope.scaling.type", GgufValue.string("linear"));
            m.put(p + "rope.scaling.factor", GgufValue.f32(c.ropeScaling().factor()));
        }
        return m;
    }
}
