package qlab.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import qlab.engine.QlabException;
import qlab.engine.util.IoErrors;

/**
 * The files of a Hugging Face model directory that text commands read beside the weights: the
 * tokenizer in every form transformers writes it, the chat template (inside tokenizer_config.json
 * or in a file of its own) and generation_config.json (end-of-sequence ids, sampling defaults). A
 * quantized file written elsewhere needs all of them beside it for {@code generate --chat}.
 */
final class TokenizerFiles {

    static final List<String> NAMES = List.of(
            "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json",
            "chat_template.jinja", "chat_template.json", "generation_config.json",
            "vocab.json", "vocab.txt", "merges.txt", "tokenizer.model", "spiece.model", "sentencepiece.bpe.model");

    private TokenizerFiles() {}

    /**
     * Copies those of {@link #NAMES} that {@code fromDir} has into {@code toDir}, leaving files
     * already there as they are, and returns the names copied.
     */
    static List<String> copy(Path fromDir, Path toDir) {
        List<String> copied = new ArrayList<>();
        if (fromDir == null || sameDirectory(fromDir, toDir)) {
            return copied;
        }
        for (String name : NAMES) {
            Path src = fromDir.resolve(name);
            Path dst = toDir.resolve(name);
            if (!Files.isRegularFile(src) || Files.exists(dst)) {
                continue;
            }
            try {
                Files.copy(src, dst);
            } catch (IOException e) {
                throw new QlabException(dst + ": cannot copy " + src + ": " + IoErrors.why(e));
            }
            copied.add(name);
        }
        return copied;
    }

    private static boolean sameDirectory(Path a, Path b) {
        try {
            return Files.isSameFile(a, b);
        } catch (IOException e) {
            return false;
        }
    }
}
