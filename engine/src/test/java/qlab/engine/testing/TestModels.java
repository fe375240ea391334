package qlab.engine.testing;

import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import qlab.engine.model.Model;
import qlab.engine.model.ModelConfig;
import qlab.engine.model.ModelManifest;
import qlab.engine.model.RopeScaling;
import qlab.engine.safetensors.Checkpoint;
import qlab.engine.safetensors.DType;
import qlab.engine.safetensors.SafetensorsWriter;
import qlab.engine.synthetic.SyntheticCheckpoint;

/** Small synthetic models of assorted shapes, written to a temporary directory. */
public final class TestModels {

    private TestModels() {}

    /** hidden 48, 3 layers, 6 heads over 2 KV heads (group 3), head dim 8, untied head, theta 10000, eps 1e-5. */
    public static ModelConfig untiedGroup3() {
        return new ModelConfig(48, 72, 3, 6, 2, 8, 300, 1e-5, 10_000.0, false, 4096, "bfloat16");
    }

    /** hidden 40, 2 layers, 5 heads and 5 KV heads (no grouping), head dim 8 (not a multiple of the vector width). */
    public static ModelConfig noGrouping() {
        return new ModelConfig(40, 100, 2, 5, 5, 8, 257, 1e-6, 500_000.0, true, 4096, "bfloat16");
    }

    /** hidden 64, head dim 32 set explicitly (2 heads x 32 = 64), 1 KV head (group 2), intermediate 50. */
    public static ModelConfig oneKvHead() {
        return new ModelConfig(64, 50, 2, 2, 1, 32, 512, 1e-6, 1_000_000.0, true, 4096, "bfloat16");
    }

    /**
     * Llama, hidden 48, 6 heads over 2 KV heads, head dim 8, untied, llama3 RoPE scaling whose
     * three branches are all taken (theta 5e5, original context 200: frequency 0 kept, 1
     * interpolated, 2 and 3 divided by the factor).
     */
    public static ModelConfig llama3Scaled() {
        return ModelConfig.llama(48, 72, 3, 6, 2, 8, 300, 1e-5, 500_000.0, RopeScaling.llama3(8, 1, 4, 200),
                false, 4096, "bfloat16", false, false);
    }

    /** Llama with attention_bias (q/k/v/o) and mlp_bias, head dim 24 given apart from hidden 64 / 4 heads, linear RoPE x4. */
    public static ModelConfig llamaBiases() {
        return ModelConfig.llama(64, 96, 2, 4, 2, 24, 320, 1e-5, 10_000.0, RopeScaling.linear(4),
                true, 4096, "bfloat16", true, true);
    }

    /** Qwen3: q/k norms, head dim 12 (not hidden 40 / 5 heads, not a multiple of the vector width), no grouping. */
    public static ModelConfig qwen3Norms() {
        return ModelConfig.qwen3(40, 100, 2, 5, 5, 12, 257, 1e-6, 1_000_000.0, RopeScaling.NONE, true, 4096, "bfloat16", false);
    }

    /** Qwen3 with attention_bias (q/k/v/o biases) and q/k norms, head dim 16 over hidden 48 and 6 heads over 3 KV heads, untied. */
    public static ModelConfig qwen3Biases() {
        return ModelConfig.qwen3(48, 80, 2, 6, 3, 16, 300, 1e-6, 1_000_000.0, RopeScaling.NONE, false, 4096, "bfloat16", true);
    }

    public static Model write(ModelConfig config, long seed, Path dir) {
        new SyntheticCheckpoint(config, seed).write(dir);
        return Model.load(dir);
    }

    /**
     * The synthetic checkpoint with its final norm multiplied by {@code finalNormScale}: the logits
     * scale with it (the head is linear in the normed state), so a test sees logits of a trained
     * model's size (tens) rather than the synthetic model's few units.
     */
    public static Model writeWithLogitScale(ModelConfig config, long seed, double finalNormScale, Path dir) {
        SyntheticCheckpoint synthetic = new SyntheticCheckpoint(config, seed);
        synthetic.write(dir);
        SafetensorsWriter w = new SafetensorsWriter();
        for (Map.Entry<String, long[]> e : new TreeMap<>(ModelManifest.of(config).expected()).entrySet()) {
            float[] v = synthetic.values(e.getKey(), e.getValue());
            if (e.getKey().equals(ModelManifest.FINAL_NORM)) {
                for (int i = 0; i < v.length; i++) {
                    v[i] = (float) (v[i] * finalNormScale);
                }
            }
            w.addFloats(e.getKey(), DType.BF16, e.getValue(), v);
        }
        w.write(dir.resolve(Checkpoint.SINGLE));
        return Model.load(dir);
    }
}
