package qlab.pipeline;

import java.io.Serializable;
import java.util.Objects;

/**
 * Which model a sweep evaluates: either a synthetic preset generated from a seed, or a Hugging Face
 * directory. Exactly one of {@code preset} and {@code path} is set; {@code seed} goes with the preset.
 */
public record ModelSpec(String preset, Long seed, String path) implements Serializable {

    public ModelSpec {
        if ((preset == null) == (path == null)) {
            throw new IllegalArgumentException("exactly one of preset and path must be set");
        }
        if (preset != null) {
            Objects.requireNonNull(seed, "a preset needs a seed");
        }
    }

    public static ModelSpec preset(String preset, long seed) {
        return new ModelSpec(preset, seed, null);
    }

    public static ModelSpec directory(String path) {
        return new ModelSpec(null, null, path);
    }

    public boolean isPreset() {
        return preset != null;
    }

    /** A short stable text naming the model, used in keys and labels. */
    public String key() {
        return isPreset() ? "preset:" + preset + "@" + seed : "path:" + path;
    }
}
