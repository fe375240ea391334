package qlab.engine.model;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import qlab.engine.QlabException;
import qlab.engine.util.JsonErrors;

/**
 * The shape and structure of a model, as read from a Hugging Face {@code config.json}: its sizes,
 * and, as data, what its {@link ModelFamily} changes in the one forward pass (which projections
 * carry biases, whether q and k are normalised per head, how RoPE frequencies are scaled).
 *
 * <p>Fields the architecture cannot do without are required; a config missing one is rejected
 * naming it, rather than guessing a default that silently changes the arithmetic. Features this
 * engine does not implement (other RoPE scalings, sliding-window attention, other activations,
 * partial rotary embeddings) are rejected too, for the same reason. Both generations of
 * transformers' config layout are read: {@code rope_theta} and {@code rope_scaling} at the top
 * level, or inside {@code rope_parameters}.
 */
public record ModelConfig(
        ModelFamily family,
        int hiddenSize,
        int intermediateSize,
        int numLayers,
        int numHeads,
        int numKvHeads,
        int headDim,
        int vocabSize,
        double rmsNormEps,
        double ropeTheta,
        RopeScaling ropeScaling,
        boolean tieWordEmbeddings,
        int maxPositionEmbeddings,
        String torchDtype,
        boolean qkvBias,    // q_proj, k_proj, v_proj have biases
        boolean oBias,      // o_proj has a bias
        boolean mlpBias,    // gate_proj, up_proj, down_proj have biases
        boolean qkNorm) {   // per-head RMSNorm of q and k (q_norm, k_norm) before RoPE

    public ModelConfig {
        check(hiddenSize > 0, "hidden_size", "must be positive, got " + hiddenSize);
        check(intermediateSize > 0, "intermediate_size", "must be positive, got " + intermediateSize);
        check(numLayers > 0, "num_hidden_layers", "must be positive, got " + numLayers);
        check(numHeads > 0, "num_attention_heads", "must be positive, got " + numHeads);
        check(numKvHeads > 0, "num_key_value_heads", "must be positive, got " + numKvHeads);
        check(numHeads % numKvHeads == 0, "num_key_value_heads",
                numKvHeads + " does not divide num_attention_heads " + numHeads);
        check(headDim > 0 && headDim % 2 == 0, "head_dim", "must be positive and even (RoPE rotates halves), got " + headDim);
        check(vocabSize > 0, "vocab_size", "must be positive, got " + vocabSize);
        check(rmsNormEps > 0 && Double.isFinite(rmsNormEps), "rms_norm_eps", "must be positive, got " + rmsNormEps);
        check(ropeTheta > 0 && Double.isFinite(ropeTheta), "rope_theta", "must be positive, got " + ropeTheta);
        check(maxPositionEmbeddings > 0, "max_position_embeddings", "must be positive, got " + maxPositionEmbeddings);
        boolean expressible = switch (family) {
            case QWEN2 -> qkvBias && !oBias && !mlpBias && !qkNorm;
            case LLAMA -> qkvBias == oBias && !qkNorm;
            case QWEN3 -> qkvBias == oBias && !mlpBias && qkNorm;
        };
        if (!expressible) {
            throw new IllegalArgumentException(family.modelType() + " cannot have qkvBias " + qkvBias + ", oBias " + oBias
                    + ", mlpBias " + mlpBias + ", qkNorm " + qkNorm);
        }
    }

    /** A Qwen2 model (q/k/v biases, default RoPE). */
    public ModelConfig(int hiddenSize, int intermediateSize, int numLayers, int numHeads, int numKvHeads, int headDim,
            int vocabSize, double rmsNormEps, double ropeTheta, boolean tieWordEmbeddings, int maxPositionEmbeddings,
            String torchDtype) {
        this(ModelFamily.QWEN2, hiddenSize, intermediateSize, numLayers, numHeads, numKvHeads, headDim, vocabSize, rmsNormEps,
                ropeTheta, RopeScaling.NONE, tieWordEmbeddings, maxPositionEmbeddings, torchDtype, true, false, false, false);
    }

    /** A Llama model: {@code attentionBias} on q/k/v/o, {@code mlpBias} on gate/up/down. */
    public static ModelConfig llama(int hiddenSize, int intermediateSize, int numLayers, int numHeads, int numKvHeads,
            int headDim, int vocabSize, double rmsNormEps, double ropeTheta, RopeScaling ropeScaling,
            boolean tieWordEmbeddings, int maxPositionEmbeddings, String torchDtype, boolean attentionBias, boolean mlpBias) {
        return new ModelConfig(ModelFamily.LLAMA, hiddenSize, intermediateSize, numLayers, numHeads, numKvHeads, headDim,
                vocabSize, rmsNormEps, ropeTheta, ropeScaling, tieWordEmbeddings, maxPositionEmbeddings, torchDtype,
                attentionBias, attentionBias, mlpBias, false);
    }

    /** A Qwen3 model: q/k norms, {@code attentionBias} on q/k/v/o. */
    public static ModelConfig qwen3(int hiddenSize, int intermediateSize, int numLayers, int numHeads, int numKvHeads,
            int headDim, int vocabSize, double rmsNormEps, double ropeTheta, RopeScaling ropeScaling,
            boolean tieWordEmbeddings, int maxPositionEmbeddings, String torchDtype, boolean attentionBias) {
        return new ModelConfig(ModelFamily.QWEN3, hiddenSize, intermediateSize, numLayers, numHeads, numKvHeads, headDim,
                vocabSize, rmsNormEps, ropeTheta, ropeScaling, tieWordEmbeddings, maxPositionEmbeddings, torchDtype,
                attentionBias, attentionBias, false, true);
    }

    private static void check(boolean ok, String field, String message) {
        if (!ok) {
            throw new QlabException("config.json: field \"" + field + "\" " + message);
        }
    }

    /** Query heads served by one KV head (GQA group size). */
    public int groupSize() {
        return numHeads / numKvHeads;
    }

    /** Width of the concatenated query heads. */
    public int qDim() {
        return numHeads * headDim;
    }

    /** Width of the concatenated key (or value) heads. */
    public int kvDim() {
        return numKvHeads * headDim;
    }

    /** RoPE inverse frequencies [headDim/2] in float64, scaled as {@link #ropeScaling} says. */
    public double[] ropeInverseFrequencies() {
        return ropeScaling.inverseFrequencies(ropeTheta, headDim);
    }

    public static ModelConfig read(Path modelDir) {
        Path file = Files.isDirectory(modelDir) ? modelDir.resolve("config.json") : modelDir;
        String text;
        try {
            text = Files.readString(file);
        } catch (NoSuchFileException e) {
            throw new QlabException(file + ": not found (a model directory needs config.json)");
        } catch (IOException e) {
            throw new QlabException(file + ": cannot read: " + e.getMessage());
        }
        try {
            return parse(text);
        } catch (QlabException e) {
            throw new QlabException(e.getMessage().replaceFirst("^config\\.json", file.toString()));
        }
    }

    /** Parses the text of a config.json; messages name the field ("config.json: field ..."). */
    public static ModelConfig parse(String json) {
        JsonNode root;
        try {
            root = new ObjectMapper().readTree(json);
        } catch (JacksonException e) {
            throw new QlabException("config.json: not valid JSON" + JsonErrors.where(e) + ": " + JsonErrors.why(e));
        }
        if (root == null || !root.isObject()) {
            throw new QlabException("config.json: not a JSON object");
        }
        Fields f = new Fields(root);
        String modelType = f.string("model_type", null);
        if (modelType == null) {
            throw new QlabException("config.json: field \"model_type\" is missing");
        }
        ModelFamily family = ModelFamily.byModelType(modelType);
        String act = f.string("hidden_act", "silu");
        if (!act.equals("silu")) {
            throw new QlabException("config.json: field \"hidden_act\" is " + new TextNode(act) + ", only \"silu\" is supported");
        }
        RopeScaling scaling = ropeScaling(root);
        double partialRotary = f.optionalDouble("partial_rotary_factor", 1.0);
        if (partialRotary != 1.0) {
            throw new QlabException("config.json: field \"partial_rotary_factor\" is " + partialRotary
                    + "; only full rotary embeddings (1.0) are supported");
        }
        if (f.bool("use_sliding_window", false)) {
            throw new QlabException("config.json: field \"use_sliding_window\" is true; sliding-window attention is not supported");
        }
        JsonNode layerTypes = root.get("layer_types");
        if (layerTypes != null && layerTypes.isArray()) {
            for (JsonNode type : layerTypes) {
                if (!"full_attention".equals(type.asText())) {
                    throw new QlabException("config.json: field \"layer_types\" lists " + type
                            + "; only \"full_attention\" layers are supported");
                }
            }
        }
        int hidden = f.requiredInt("hidden_size");
        int heads = f.requiredInt("num_attention_heads");
        int headDim;
        if (root.hasNonNull("head_dim")) {
            headDim = f.requiredInt("head_dim");
        } else {
            check(heads > 0, "num_attention_heads", "must be positive, got " + heads);
            check(hidden % heads == 0, "hidden_size", hidden + " is not divisible by num_attention_heads " + heads);
            headDim = hidden / heads;
        }
        // transformers' defaults per family (Qwen2 and Qwen3 configs have no mlp_bias; Qwen2 has no attention_bias)
        boolean attentionBias = family != ModelFamily.QWEN2 && f.bool("attention_bias", false);
        boolean mlpBias = family == ModelFamily.LLAMA && f.bool("mlp_bias", false);
        return new ModelConfig(
                family,
                hidden,
                f.requiredInt("intermediate_size"),
                f.requiredInt("num_hidden_layers"),
                heads,
                f.requiredInt("num_key_value_heads"),
                headDim,
                f.requiredInt("vocab_size"),
                f.requiredDouble("rms_norm_eps"),
                ropeTheta(root, f),
                scaling,
                f.bool("tie_word_embeddings", false),
                f.optionalInt("max_position_embeddings", family == ModelFamily.LLAMA ? 2048 : 32768),
                f.string("torch_dtype", f.string("dtype", "float32")),
                family == ModelFamily.QWEN2 || attentionBias,
                attentionBias,
                mlpBias,
                family == ModelFamily.QWEN3);
    }

    /**
     * The RoPE scaling from {@code rope_scaling} (transformers 4) or {@code rope_parameters}
     * (transformers 5); when both are given they must agree.
     */
    private static RopeScaling ropeScaling(JsonNode root) {
        RopeScaling legacy = RopeScaling.parse(root, "rope_scaling");
        RopeScaling parameters = RopeScaling.parse(root, "rope_parameters");
        if (legacy.type() != RopeScaling.Type.NONE && parameters.type() != RopeScaling.Type.NONE && !legacy.equals(parameters)) {
            throw new QlabException("config.json: field \"rope_scaling\" (" + legacy + ") contradicts \"rope_parameters\" ("
                    + parameters + ")");
        }
        return legacy.type() != RopeScaling.Type.NONE ? legacy : parameters;
    }

    /** The RoPE base: {@code rope_theta}, or {@code rope_parameters.rope_theta} where transformers 5 keeps it. */
    private static double ropeTheta(JsonNode root, Fields f) {
        JsonNode parameters = root.get("rope_parameters");
        if (!root.hasNonNull("rope_theta") && parameters != null && parameters.hasNonNull("rope_theta")) {
            JsonNode v = parameters.get("rope_theta");
            if (!v.isNumber()) {
                throw new QlabException("config.json: field \"rope_parameters.rope_theta\" must be a number, got " + v);
            }
            return v.doubleValue();
        }
        return f.requiredDouble("rope_theta");
    }

    /** The config.json a Hugging Face model directory of this family would carry. */
    public String toJson() {
        ObjectMapper mapper = new ObjectMapper();
        ObjectNode n = mapper.createObjectNode();
        n.putArray("architectures").add(family.architecture());
        n.put("model_type", family.modelType());
        n.put("hidden_act", "silu");
        n.put("hidden_size", hiddenSize);
        n.put("intermediate_size", intermediateSize);
        n.put("num_hidden_layers", numLayers);
        n.put("num_attention_heads", numHeads);
        n.put("num_key_value_heads", numKvHeads);
        if (headDim * numHeads != hiddenSize || family != ModelFamily.QWEN2) {
            n.put("head_dim", headDim);
        }
        if (family != ModelFamily.QWEN2) {
            n.put("attention_bias", oBias);
        }
        if (family == ModelFamily.LLAMA) {
            n.put("mlp_bias", mlpBias);
        }
        ropeScaling.writeTo(n);
        n.put("rms_norm_eps", rmsNormEps);
        n.put("rope_theta", ropeTheta);
        n.put("vocab_size", vocabSize);
        n.put("tie_word_embeddings", tieWordEmbeddings);
        n.put("max_position_embeddings", maxPositionEmbeddings);
        n.put("torch_dtype", torchDtype);
        if (family != ModelFamily.LLAMA) {
            n.put("use_sliding_window", false);
        }
        try {
            return mapper.writerWithDefaultPrettyPrinter().writeValueAsString(n) + "\n";
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Parameter count of the model these shapes describe (norms and biases included). */
    public long parameterCount() {
        long total = 0;
        for (var shape : ModelManifest.of(this).expected().values()) {
            long n = 1;
            for (long d : shape) {
                n *= d;
            }
            total += n;
        }
        return total;
    }

    public Map<String, Object> describe() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("model_type", family.modelType());
        m.put("hidden_size", hiddenSize);
        m.put("intermediate_size", intermediateSize);
        m.put("num_hidden_layers", numLayers);
        m.put("num_attention_heads", numHeads);
        m.put("num_key_value_heads", numKvHeads);
        m.put("head_dim", headDim);
        m.put("vocab_size", vocabSize);
        m.put("rope_theta", ropeTheta);
        m.put("rope_scaling", ropeScaling.toString());
        m.put("rms_norm_eps", rmsNormEps);
        m.put("tie_word_embeddings", tieWordEmbeddings);
        m.put("qkv_bias", qkvBias);
        m.put("o_bias", oBias);
        m.put("mlp_bias", mlpBias);
        m.put("qk_norm", qkNorm);
        return m;
    }

    /** Typed access to the JSON fields, with errors naming the field. */
    private record Fields(JsonNode root) {
        int requiredInt(String name) {
            JsonNode v = root.get(name);
            if (v == null || v.isNull()) {
                throw new QlabException("config.json: field \"" + name + "\" is missing");
            }
            if (!v.isIntegralNumber() || !v.canConvertToInt()) {
                throw new QlabException("config.json: field \"" + name + "\" must be an integer, got " + v);
            }
            return v.intValue();
        }

        int optionalInt(String name, int dflt) {
            return root.hasNonNull(name) ? requiredInt(name) : dflt;
        }

        double optionalDouble(String name, double dflt) {
            return root.hasNonNull(name) ? requiredDouble(name) : dflt;
        }

        double requiredDouble(String name) {
            JsonNode v = root.get(name);
            if (v == null || v.isNull()) {
                throw new QlabException("config.json: field \"" + name + "\" is missing");
            }
            if (!v.isNumber()) {
                throw new QlabException("config.json: field \"" + name + "\" must be a number, got " + v);
            }
            return v.doubleValue();
        }

        boolean bool(String name, boolean dflt) {
            JsonNode v = root.get(name);
            if (v == null || v.isNull()) {
                return dflt;
            }
            if (!v.isBoolean()) {
                throw new QlabException("config.json: field \"" + name + "\" must be true or false, got " + v);
            }
            return v.booleanValue();
        }

        String string(String name, String dflt) {
            JsonNode v = root.get(name);
            if (v == null || v.isNull()) {
                return dflt;
            }
            if (!v.isTextual()) {
                throw new QlabException("config.json: field \"" + name + "\" must be a string, got " + v);
            }
            return v.textValue();
        }
    }
}
