package qlab.engine.synthetic;

import java.util.Arrays;
import java.util.stream.Collectors;
import qlab.engine.QlabException;
import qlab.engine.model.ModelConfig;
import qlab.engine.model.RopeScaling;

/** Shapes of the synthetic checkpoints {@code qlab gen} writes. */
public enum SyntheticPreset {
    /** Seconds to generate and run; for tests and the quick sweep. */
    TINY("tiny", new ModelConfig(64, 176, 2, 4, 2, 16, 4096, 1e-6, 1_000_000.0, true, 32768, "bfloat16")),
    /** TINY's sizes as a Llama: llama3 RoPE scaling (all three frequency branches at head dim 16), untied head. */
    TINY_LLAMA("tiny-llama", ModelConfig.llama(64, 176, 2, 4, 2, 16, 4096, 1e-5, 500_000.0,
            RopeScaling.llama3(8, 1, 4, 64), false, 32768, "bfloat16", false, false)),
    /** TINY's sizes as a Qwen3: q/k norms, head dim 32 (4 heads x 32 = twice the hidden size). */
    TINY_QWEN3("tiny-qwen3", ModelConfig.qwen3(64, 176, 2, 4, 2, 32, 4096, 1e-6, 1_000_000.0,
            RopeScaling.NONE, true, 32768, "bfloat16", false)),
    /** A few million parameters, deep enough for quantization error to compound across layers. */
    SMALL("small", new ModelConfig(256, 704, 4, 4, 2, 64, 8192, 1e-6, 1_000_000.0, true, 32768, "bfloat16")),
    /** Exactly the shapes of Qwen2.5-0.5B-Instruct: 494,032,768 parameters. */
    QWEN25_05B("qwen2.5-0.5b", new ModelConfig(896, 4864, 24, 14, 2, 64, 151936, 1e-6, 1_000_000.0, true, 32768, "bfloat16")),
    /** Exactly the shapes of Llama-3.2-1B (llama3 RoPE scaling, tied head): 1,235,814,400 parameters. */
    LLAMA32_1B("llama3.2-1b", ModelConfig.llama(2048, 8192, 16, 32, 8, 64, 128256, 1e-5, 500_000.0,
            RopeScaling.llama3(32, 1, 4, 8192), true, 131072, "bfloat16", false, false)),
    /** Exactly the shapes of Qwen3-0.6B (q/k norms, head dim 128 over hidden 1024, tied head): 596,049,920 parameters. */
    QWEN3_06B("qwen3-0.6b", ModelConfig.qwen3(1024, 3072, 28, 16, 8, 128, 151936, 1e-6, 1_000_000.0,
            RopeScaling.NONE, true, 40960, "bfloat16", false));

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

    /** Every preset id, comma-separated. */
    public static String known() {
        return Arrays.stream(values()).map(SyntheticPreset::id).collect(Collectors.joining(", "));
    }

    public static SyntheticPreset byId(String id) {
        for (SyntheticPreset p : values()) {
            if (p.id.equals(id)) {
                return p;
            }
        }
        throw new QlabException("unknown preset \"" + id + "\"; known: " + known());
    }
}
