package qlab.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import qlab.engine.model.Model;
import qlab.quant.checkpoint.GgufCheckpoint;
import qlab.quant.checkpoint.QuantizedCheckpoint;

/**
 * Opens whatever a --model argument names: a Hugging Face directory, a quantized checkpoint file,
 * or a llama.cpp GGUF file.
 */
final class Models {

    private Models() {}

    static Model open(Path path) {
        if (GgufCheckpoint.isGguf(path)) {
            return GgufCheckpoint.load(path);
        }
        if (Files.isRegularFile(path) && QuantizedCheckpoint.isQuantized(path)) {
            return QuantizedCheckpoint.load(path);
        }
        return Model.load(path);
    }
}
