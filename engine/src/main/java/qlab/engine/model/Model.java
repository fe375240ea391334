package qlab.engine.model;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import qlab.engine.QlabException;
import qlab.engine.safetensors.Checkpoint;
import qlab.engine.safetensors.TensorInfo;

/** A loaded model: its config and weights, and where they came from. */
public record Model(ModelConfig config, Weights weights, String source) {

    /** Loads a Hugging Face model directory (config.json + safetensors, single or sharded). */
    public static Model load(Path dir) {
        return load(dir, CheckpointWeights::new);
    }

    /**
     * Loads a Hugging Face model directory with its matrices made by {@code weights} from the
     * checked checkpoint (the default, {@link CheckpointWeights}, widens them onto the heap).
     */
    public static Model load(Path dir, Function<Checkpoint, WeightSource> weights) {
        ModelConfig config = ModelConfig.read(dir);
        Checkpoint ckpt = checkedCheckpoint(dir, config);
        return new Model(config, Weights.load(config, weights.apply(ckpt)), dir.toString());
    }

    /**
     * Reads config.json and the tensor headers and checks that they agree, without loading any
     * weights: what {@link #load} would reject, found in milliseconds.
     */
    public static ModelConfig check(Path dir) {
        ModelConfig config = ModelConfig.read(dir);
        checkedCheckpoint(dir, config);
        return config;
    }

    private static Checkpoint checkedCheckpoint(Path dir, ModelConfig config) {
        Checkpoint ckpt = Checkpoint.open(dir);
        List<String> problems = ModelManifest.of(config).problems(shapes(ckpt));
        if (!problems.isEmpty()) {
            throw new QlabException(ckpt.source() + ": the tensors do not match config.json (" + problems.size()
                    + " problem(s)): " + String.join("; ", problems.subList(0, Math.min(3, problems.size())))
                    + (problems.size() > 3 ? "; ... (qlab inspect lists all)" : ""));
        }
        return ckpt;
    }

    public static Map<String, long[]> shapes(Checkpoint ckpt) {
        Map<String, long[]> m = new LinkedHashMap<>();
        for (TensorInfo t : ckpt.tensors().values()) {
            m.put(t.name(), t.shape());
        }
        return m;
    }
}
