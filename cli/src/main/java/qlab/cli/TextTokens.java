package qlab.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import qlab.engine.QlabException;
import qlab.engine.tokenizer.Tokenizer;

/**
 * The tokenizer that belongs to a model: tokenizer.json in the model directory, or beside a
 * quantized model file.
 */
final class TextTokens {

    private static final Map<Path, Tokenizer> LOADED = new ConcurrentHashMap<>();

    private TextTokens() {}

    /** The directory holding the model's tokenizer files: the model directory, or the one a model file is in. */
    static Path directory(Path model) {
        return Files.isDirectory(model) ? model : model.toAbsolutePath().getParent();
    }

    static Optional<Path> locate(Path model) {
        Path dir = directory(model);
        Path file = dir == null ? null : dir.resolve("tokenizer.json");
        return file != null && Files.isRegularFile(file) ? Optional.of(file) : Optional.empty();
    }

    static Optional<Tokenizer> forModel(Path model) {
        return locate(model).map(f -> LOADED.computeIfAbsent(f.toAbsolutePath(), Tokenizer::load));
    }

    static Tokenizer require(Path model) {
        Models.requireExists(model);
        return forModel(model).orElseThrow(() -> new QlabException(model
                + ": no tokenizer.json in the model directory (text needs one; use --ids FILE for token ids)"));
    }

    static int[] encode(Path model, String text) {
        return require(model).encode(text);
    }
}
