package qlab.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Arrays;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Option;
import qlab.engine.QlabException;
import qlab.engine.eval.ScoringMode;
import qlab.engine.eval.Windows;

/** The text a measurement scores: --text FILE (tokenized by the model's tokenizer) or --ids FILE. */
final class TokenInput {

    static final class Source {
        @Option(names = "--text", paramLabel = "FILE", description = "Text file, tokenized with the model's tokenizer.json.")
        Path text;

        @Option(names = "--ids", paramLabel = "FILE", description = "Token ids separated by whitespace or commas (for models without a tokenizer).")
        Path ids;
    }

    @ArgGroup(exclusive = true, multiplicity = "1")
    Source source;

    @Option(names = "--max-tokens", paramLabel = "N", description = "Use at most the first N tokens.")
    Integer maxTokens;

    /**
     * The tokens, a description of where they came from (for cache keys and reports), and the file
     * they were read from.
     */
    record Tokens(int[] ids, String origin, Path file) {

        /** Fails, naming the file, unless the tokens fill at least one scoring window. */
        void requireWindow(int ctx, ScoringMode mode) {
            try {
                Windows.plan(ids.length, ctx, mode);
            } catch (QlabException e) {
                throw new QlabException(file + ": " + e.getMessage());
            }
        }
    }

    Tokens load(Path model) {
        int[] ids;
        String origin;
        Path file = source.ids != null ? source.ids : source.text;
        if (source.ids != null) {
            ids = IdList.parse(source.ids.toString(), read(source.ids));
            origin = "ids:" + source.ids.getFileName();
        } else {
            String text = read(source.text);
            if (text.isEmpty()) {
                throw new QlabException(source.text + ": the text is empty");
            }
            ids = TextTokens.encode(model, text);
            origin = "text:" + source.text.getFileName();
        }
        if (maxTokens != null) {
            if (maxTokens < 2) {
                throw new QlabException("--max-tokens must be at least 2, got " + maxTokens);
            }
            ids = Arrays.copyOf(ids, Math.min(ids.length, maxTokens));
        }
        return new Tokens(ids, origin, file);
    }

    private static String read(Path p) {
        try {
            return Files.readString(p);
        } catch (NoSuchFileException e) {
            throw new QlabException(p + ": not found");
        } catch (IOException e) {
            throw new QlabException(p + ": cannot read: " + e.getMessage());
        }
    }
}
