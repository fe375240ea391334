package qlab.engine.tokenizer;

/**
 * One step of the {@code normalizer} of a {@code tokenizer.json}, applied to each stretch of text
 * between added tokens (and to the content of added tokens flagged {@code normalized}).
 */
interface TextNormalizer {
    /** True when {@code text[start, end)} is certainly unchanged by this step (a non-empty range). */
    boolean isTrivial(String text, int start, int end);

    String apply(String text);

    /** {@code Prepend}: puts a string in front of non-empty text (SentencePiece's leading {@code ▁}). */
    record Prepend(String prefix) implements TextNormalizer {
        @Override
        public boolean isTrivial(String text, int start, int end) {
            return prefix.isEmpty() || start == end;
        }

        @Override
        public String apply(String text) {
            return text.isEmpty() ? text : prefix + text;
        }
    }

    /**
     * {@code Replace} with a literal pattern: every occurrence, leftmost first and not overlapping,
     * becomes {@code content} (SentencePiece's space to {@code ▁}).
     */
    record ReplaceLiteral(String pattern, String content) implements TextNormalizer {
        @Override
        public boolean isTrivial(String text, int start, int end) {
            int at = text.indexOf(pattern, start);
            return at < 0 || at + pattern.length() > end;
        }

        @Override
        public String apply(String text) {
            return text.replace(pattern, content);
        }
    }

    /** {@code Replace} with a regex pattern (translated as for Split); {@code content} is literal. */
    record ReplaceRegex(java.util.regex.Pattern pattern, String content) implements TextNormalizer {
        @Override
        public boolean isTrivial(String text, int start, int end) {
            return !pattern.matcher(text).region(start, end).useTransparentBounds(false).find();
        }

        @Override
        public String apply(String text) {
            return pattern.matcher(text).replaceAll(java.util.regex.Matcher.quoteReplacement(content));
        }
    }
}
