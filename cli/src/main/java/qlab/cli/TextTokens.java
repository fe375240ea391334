package qlab.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import qlab.engine.QlabException;
import qlab.engine.gguf.GgufFile;
import qlab.engine.gguf.GgufTokenizer;
import qlab.engine.tokenizer.Tokenizer;
import qlab.quant.checkpoint.GgufCheckpoint;

/**
 * The tokenizer that belongs to a model: tokenizer.json in the model directory, or beside a
 * quantized model file; a GGUF file carries its own in its metadata.
 */
final class TextTokens {

    private static final Map<Path, Tokenizer> LOADED = new ConcurrentHashMap<>();

    private TextTokens() {}

    static Optional<Path> locate(Path model) {
        Path dir = Files.isDirectory(model) ? model : model.toAbsolutePath().getParent();
        Path file = dir == null ? null : dir.resolve("tokenizer.json");
        return file != null && Files.isRegularFile(file) ? Optional.of(file) : Optional.empty();
    }

    static Optional<Tokenizer> forModel(Path model) {
        if (GgufCheckpoint.isGguf(model)) {
            GgufFile f = GgufCheckpoint.open(model);
            return GgufTokenizer.present(f)
                    ? Optional.of(LOADED.computeIfAbsent(model.toAbsolutePath(), p -> GgufTokenizer.read(f)))
                    : Optional.empty();
        }
        return locate(model).map(f -> LOADED.computeIfAbsent(f.toAbsolutePath(), Tokenizer::load));
    }

    static Tokenizer require(Path model) {
        return forModel(model).orElseThrow(() -> new QlabException(model
                + ": no tokenizer.json in the model directory or tokenizer.ggml metadata in the GGUF (text needs one; use --ids FILE for token ids)"));
    }

    static int[] encode(Path model, String text) {
        return require(model).encode(text);
    }
}
