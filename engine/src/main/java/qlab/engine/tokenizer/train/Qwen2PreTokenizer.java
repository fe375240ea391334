package qlab.engine.tokenizer.train;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Qwen2's pre-tokenization split: the pieces BPE merges never cross.
 *
 * <p>{@link #REGEX} is the pattern Qwen2's {@code tokenizer.json} gives its {@code Split}
 * pre-tokenizer (behaviour {@code Isolated}: matches and the text between them are pieces). The
 * Hugging Face library runs it with Oniguruma on UTF-8; Java runs the same backtracking,
 * leftmost-first alternation on code points, and {@link Pattern#UNICODE_CHARACTER_CLASS} gives the
 * same classes: {@code \s} is the Unicode {@code White_Space} property (tab to CR, U+0085,
 * and the Zs/Zl/Zp categories, which is Oniguruma's Unicode {@code \s}), {@code \p{L}} and
 * {@code \p{N}} are the general categories L and N, and {@code (?i:...)} folds case by Unicode rules
 * (so {@code 'S} matches like {@code 's}). The agreement is checked against the Rust library in
 * {@code TrainedTokenizerReferenceTest}.
 */
public final class Qwen2PreTokenizer {

    /** The split pattern, exactly as written in Qwen2's tokenizer.json. */
    public static final String REGEX = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}"
            + "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

    private static final Pattern PATTERN = Pattern.compile(REGEX, Pattern.UNICODE_CHARACTER_CLASS);

    private Qwen2PreTokenizer() {}

    /** The pieces of {@code text} (already normalized), in order; they concatenate back to it. */
    public static List<String> split(String text) {
        List<String> pieces = new ArrayList<>();
        Matcher m = PATTERN.matcher(text);
        int end = 0;
        while (m.find()) {
            // The pattern covers every character, but Isolated keeps any gap as a piece too.
            if (m.start() > end) {
                pieces.add(text.substring(end, m.start()));
            }
            pieces.add(m.group());
            end = m.end();
        }
        if (end < text.length()) {
            pieces.add(text.substring(end));
        }
        return pieces;
    }
}
