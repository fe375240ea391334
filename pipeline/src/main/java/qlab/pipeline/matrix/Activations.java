package qlab.pipeline.matrix;

import java.util.Locale;

/**
 * How the integer-format matrices of a checkpoint take their activations when it is measured. The
 * choice belongs to loading, not to quantizing: both paths run from the same checkpoint file, but
 * int8 quantizes the activations per block once per product, so its numbers (KL, perplexity) and
 * its speed differ from f32's. Float formats have only the f32 path.
 */
public enum Activations {
    /** Activations stay f32 (the engine's default). */
    F32,
    /** Activations are quantized to int8 per block and run through the int8 kernels. */
    INT8;

    public String yamlName() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static Activations fromYaml(String name) {
        for (Activations a : values()) {
            if (a.yamlName().equals(name)) {
                return a;
            }
        }
        return null;
    }

    public boolean int8() {
        return this == INT8;
    }
}
