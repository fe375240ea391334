package qlab.engine.synthetic;

import java.util.Arrays;
import java.util.stream.Collectors;
import qlab.engine.QlabException;
import qlab.engine.model.ModelConfig;

/** Shapes of the synthetic checkpoints {@code qlab gen} writes. */
public enum SyntheticPreset {
    /** Seconds to generate and run; for tests and the quick sweep. */
    TINY("tiny", new ModelConfig(64, 176, 2, 4, 2, 16, 4096, 1e-6, 1_000_000.0, true, 32768, "bfloat16")),
    /** A few million parameters, deep enough for quantization error to compound across layers. */
    SMALL("small", new ModelConfig(256, 704, 4, 4, 2, 64, 8192, 1e-6, 1_000_000.0, true, 32768, "bfloat16")),
    /** Exactly the shapes of Qwen2.5-0.5B-Instruct: 494,032,768 parameters. */
    QWEN25_05B("qwen2.5-0.5b", new ModelConfig(896, 4864, 24, 14, 2, 64, 151936, 1e-6, 1_000_000.0, true, 32768, "bfloat16"));

    private final String id;
    private final ModelConfig config;

    SyntheticPreset(String id, ModelConfig config) {
        this.id = id;
        this.config = config;
    }

    public String id() {
        return id;
    }

    public ModelConfig config() {
        return config;
    }

    public static SyntheticPreset byId(String id) {
        for (SyntheticPreset p : values()) {
            if (p.id.equals(id)) {
                return p;
            }
        }
        throw new QlabException("unknown preset \"" + id + "\"; known: "
                + Arrays.stream(values()).map(SyntheticPreset::id).collect(Collectors.joining(", ")));
    }
}
