package qlab.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import qlab.engine.QlabException;
import qlab.engine.gguf.GgufModelConfig;
import qlab.engine.model.Model;
import qlab.engine.model.ModelConfig;
import qlab.quant.checkpoint.GgufCheckpoint;
import qlab.quant.checkpoint.MappedCheckpointWeights;
import qlab.quant.checkpoint.QuantizedCheckpoint;

/**
 * Opens whatever a --model argument names: a Hugging Face directory, a quantized checkpoint file,
 * or a llama.cpp GGUF file.
 */
final class Models {

    private Models() {}

    static Model open(Path path) {
        requireExists(path);
        if (GgufCheckpoint.isGguf(path)) {
            return GgufCheckpoint.load(path);
        }
        if (Files.isRegularFile(path) && QuantizedCheckpoint.isQuantized(path)) {
            return QuantizedCheckpoint.load(path);
        }
        return Model.load(path);
    }

    /**
     * {@link #open}, except that a Hugging Face directory's matrices stay in the file's mapping,
     * widened row by row as they are read ({@link MappedCheckpointWeights}): the same values, and
     * no heap copy. kl opens both its models so: a heap copy of the reference (2 GB for a 0.5B
     * model) set the peak memory of a kl run.
     */
    static Model openMapped(Path path) {
        requireExists(path);
        if (Files.isDirectory(path)) {
            return MappedCheckpointWeights.load(path);
        }
        return open(path);
    }

    /** The weights of a model's matrices: the units quantize and export report their progress in. */
    static long matrixWeights(Model m) {
        return m.weights().matrices().values().stream().mapToLong(x -> (long) x.rows() * x.cols()).sum();
    }

    /** The model's config alone, without loading (or dequantizing) its weights. */
    static ModelConfig config(Path path) {
        requireExists(path);
        if (GgufCheckpoint.isGguf(path)) {
            return GgufModelConfig.read(GgufCheckpoint.open(path));
        }
        if (Files.isRegularFile(path) && QuantizedCheckpoint.isQuantized(path)) {
            return QuantizedCheckpoint.load(path, false, false).config();
        }
        return ModelConfig.read(path);
    }

    /** Fails with one line if the path given as --model does not exist (rather than naming a file inside it). */
    static void requireExists(Path path) {
        if (!Files.exists(path)) {
            throw new QlabException(path + ": no such model directory or file");
        }
    }
}
