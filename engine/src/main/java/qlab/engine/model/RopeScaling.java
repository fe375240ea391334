package qlab.engine.model;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import qlab.engine.QlabException;

/**
 * How the RoPE inverse frequencies are rescaled from the default {@code 1 / theta^(2i/d)}:
 * not at all, divided by a factor ({@code linear}), or Llama 3's wavelength-dependent blend
 * ({@code llama3}), as transformers' rope initialisation functions compute them. The scaling is
 * static: it depends on the config alone, never on the sequence length.
 */
public record RopeScaling(Type type, double factor, double lowFreqFactor, double highFreqFactor, int originalMaxPositionEmbeddings) {

    public enum Type {
        NONE("default"), LINEAR("linear"), LLAMA3("llama3");

        private final String id;

        Type(String id) {
            this.id = id;
        }

        public String id() {
            return id;
        }
    }

    public static final RopeScaling NONE = new RopeScaling(Type.NONE, 1, 0, 0, 0);

    public RopeScaling {
        if (type != Type.NONE) {
            check(factor > 0 && Double.isFinite(factor), "factor", "must be positive, got " + factor);
        }
        if (type == Type.LLAMA3) {
            check(lowFreqFactor > 0 && Double.isFinite(lowFreqFactor), "low_freq_factor", "must be positive, got " + lowFreqFactor);
            check(highFreqFactor > lowFreqFactor && Double.isFinite(highFreqFactor), "high_freq_factor",
                    "must be larger than low_freq_factor " + lowFreqFactor + ", got " + highFreqFactor);
            check(originalMaxPositionEmbeddings > 0, "original_max_position_embeddings",
                    "must be positive, got " + originalMaxPositionEmbeddings);
        }
    }

    public static RopeScaling linear(double factor) {
        return new RopeScaling(Type.LINEAR, factor, 0, 0, 0);
    }

    public static RopeScaling llama3(double factor, double lowFreqFactor, double highFreqFactor, int originalMaxPositionEmbeddings) {
        return new RopeScaling(Type.LLAMA3, factor, lowFreqFactor, highFreqFactor, originalMaxPositionEmbeddings);
    }

    private static void check(boolean ok, String field, String message) {
        if (!ok) {
            throw new QlabException("config.json: field \"rope_scaling." + field + "\" " + message);
        }
    }

    /**
     * The inverse frequencies [d/2] of RoPE with base {@code theta} over head dimension {@code d},
     * in float64: the default {@code 1 / theta^(2i/d)}, then this scaling.
     */
    public double[] inverseFrequencies(double theta, int d) {
        double[] inv = new double[d / 2];
        for (int i = 0; i < inv.length; i++) {
            inv[i] = 1.0 / Math.pow(theta, (2.0 * i) / d);
        }
        switch (type) {
            case NONE -> { }
            case LINEAR -> {
                for (int i = 0; i < inv.length; i++) {
                    inv[i] /= factor;
                }
            }
            case LLAMA3 -> {
                double p = originalMaxPositionEmbeddings;
                double lowFreqWavelen = p / lowFreqFactor;
                double highFreqWavelen = p / highFreqFactor;
                for (int i = 0; i < inv.length; i++) {
                    double wavelen = 2 * Math.PI / inv[i];
                    if (wavelen > lowFreqWavelen) {
                        inv[i] /= factor; // long wavelengths: interpolated by the full factor
                    } else if (wavelen >= highFreqWavelen) {
                        // between the two: a blend of scaled and unscaled, linear in p / wavelen
                        double s = (p / wavelen - lowFreqFactor) / (highFreqFactor - lowFreqFactor);
                        inv[i] = (1 - s) * inv[i] / factor + s * inv[i];
                    } // short wavelengths are kept
                }
            }
        }
        return inv;
    }

    /**
     * Reads a transformers RoPE description: {@code rope_scaling} (transformers 4: null, or an
     * object with {@code rope_type} or {@code type}) or {@code rope_parameters} (transformers 5,
     * which also carries {@code rope_theta}). Types other than default, linear and llama3 change
     * the arithmetic in ways this engine does not compute, so they are rejected naming the field.
     */
    static RopeScaling parse(JsonNode root, String field) {
        JsonNode v = root.get(field);
        if (v == null || v.isNull()) {
            return NONE;
        }
        if (!v.isObject()) {
            throw new QlabException("config.json: field \"" + field + "\" must be an object or null, got " + v);
        }
        JsonNode type = v.hasNonNull("rope_type") ? v.get("rope_type") : v.get("type");
        if (type == null || type.isNull()) {
            if (v.size() > (v.has("rope_theta") ? 1 : 0)) {
                throw new QlabException("config.json: field \"" + field + "\" is set without a \"rope_type\"");
            }
            return NONE;
        }
        return switch (type.asText()) {
            case "default" -> NONE;
            case "linear" -> linear(number(v, field, "factor"));
            case "llama3" -> llama3(number(v, field, "factor"), number(v, field, "low_freq_factor"),
                    number(v, field, "high_freq_factor"), integer(v, field, "original_max_position_embeddings"));
            default -> throw new QlabException("config.json: field \"" + field + "\" has rope_type " + type
                    + "; only \"default\", \"linear\" and \"llama3\" are supported");
        };
    }

    private static double number(JsonNode obj, String field, String key) {
        JsonNode v = obj.get(key);
        if (v == null || v.isNull()) {
            throw new QlabException("config.json: field \"" + field + "." + key + "\" is missing");
        }
        if (!v.isNumber()) {
            throw new QlabException("config.json: field \"" + field + "." + key + "\" must be a number, got " + v);
        }
        return v.doubleValue();
    }

    private static int integer(JsonNode obj, String field, String key) {
        double d = number(obj, field, key);
        if (d != Math.rint(d) || Math.abs(d) > Integer.MAX_VALUE) {
            throw new QlabException("config.json: field \"" + field + "." + key + "\" must be an integer, got " + obj.get(key));
        }
        return (int) d;
    }

    /** The {@code rope_scaling} object transformers 4 writes, or null when there is no scaling. */
    void writeTo(ObjectNode config) {
        switch (type) {
            case NONE -> config.putNull("rope_scaling");
            case LINEAR -> config.putObject("rope_scaling").put("rope_type", "linear").put("factor", factor);
            case LLAMA3 -> config.putObject("rope_scaling").put("rope_type", "llama3").put("factor", factor)
                    .put("low_freq_factor", lowFreqFactor).put("high_freq_factor", highFreqFactor)
                    .put("original_max_position_embeddings", originalMaxPositionEmbeddings);
        }
    }

    @Override
    public String toString() {
        return switch (type) {
            case NONE -> "none";
            case LINEAR -> "linear x" + factor;
            case LLAMA3 -> "llama3 x" + factor + " (low " + lowFreqFactor + ", high " + highFreqFactor
                    + ", original " + originalMaxPositionEmbeddings + ")";
        };
    }
}
