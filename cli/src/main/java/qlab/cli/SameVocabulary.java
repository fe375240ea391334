package qlab.cli;

import java.nio.file.Path;
import java.util.Optional;
import java.util.regex.Pattern;
import qlab.engine.QlabException;
import qlab.engine.tokenizer.Tokenizer;

/**
 * Whether two models can be compared token by token (kl): the same number of logits, and where
 * both carry a tokenizer, the same token behind every id. A KL between models whose ids mean
 * different tokens is a number with no meaning, so it is refused rather than printed.
 */
final class SameVocabulary {

    /** The placeholder tokens a GGUF's token list is padded with up to the embedding's rows. */
    private static final Pattern PADDING = Pattern.compile("\\[PAD\\d+]");

    private SameVocabulary() {}

    static void require(Path base, Path model) {
        int baseVocab = Models.config(base).vocabSize();
        int modelVocab = Models.config(model).vocabSize();
        if (baseVocab != modelVocab) {
            throw new QlabException("--base " + base + " has a vocabulary of " + baseVocab + " tokens, --model " + model
                    + " of " + modelVocab + ": models with different vocabularies cannot be compared token by token");
        }
        Optional<Tokenizer> a = TextTokens.forModel(base);
        Optional<Tokenizer> b = TextTokens.forModel(model);
        if (a.isEmpty() || b.isEmpty()) {
            return;
        }
        Tokenizer ta = a.get();
        Tokenizer tb = b.get();
        int n = Math.max(ta.vocabSize(), tb.vocabSize());
        for (int id = 0; id < n; id++) {
            String x = ta.tokenText(id);
            String y = tb.tokenText(id);
            if (x == null && isPadding(y) || y == null && isPadding(x) || x != null && x.equals(y)) {
                continue;
            }
            throw new QlabException("--base " + base + " and --model " + model + " have different tokenizers: token " + id
                    + " is " + quoted(x) + " in --base's, " + quoted(y) + " in --model's");
        }
    }

    private static boolean isPadding(String token) {
        return token != null && PADDING.matcher(token).matches();
    }

    private static String quoted(String token) {
        return token == null ? "absent" : "\"" + token + "\"";
    }
}
