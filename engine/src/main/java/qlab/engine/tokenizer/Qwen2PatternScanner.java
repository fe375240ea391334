package qlab.engine.tokenizer;

/**
 * A hand-written matcher for the Qwen2 pre-tokenizer pattern (and its Llama 3 variant, which
 * differs only in taking up to three digits at a time):
 * <pre>
 * (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
 * </pre>
 * It returns exactly what the regex engine would (leftmost-first alternation, greedy with
 * backtracking), worked out per alternative below, at a fraction of a general regex engine's cost.
 * {@link TranslatedRegexSplitter} compiled from the same pattern is the reference it is tested against.
 */
final class Qwen2PatternScanner implements PieceSplitter {
    static final String QWEN2_PATTERN =
            "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
    static final String LLAMA3_PATTERN =
            "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

    private final int maxDigits;

    private Qwen2PatternScanner(int maxDigits) {
        this.maxDigits = maxDigits;
    }

    /** The scanner for this exact pattern text, or null if the pattern is not one it implements. */
    static Qwen2PatternScanner forPattern(String pattern) {
        if (QWEN2_PATTERN.equals(pattern)) {
            return new Qwen2PatternScanner(1);
        }
        if (LLAMA3_PATTERN.equals(pattern)) {
            return new Qwen2PatternScanner(3);
        }
        return null;
    }

    @Override
    public void split(String text, int start, int end, PieceConsumer out) {
        int i = start;
        while (i < end) {
            int matchEnd = matchAt(text, i, end);
            out.accept(text, i, matchEnd);
            i = matchEnd;
        }
    }

    /** End of the match starting at {@code i}; some alternative always matches at least one char. */
    int matchAt(String s, int i, int end) {
        int c = s.codePointAt(i);
        int afterC = i + Character.charCount(c);
        int cls = UnicodeClasses.classOf(c);

        // (?i:'s|'t|'re|'ve|'m|'ll|'d)
        if (c == '\'' && afterC < end) {
            int contraction = contractionLength(s, afterC, end);
            if (contraction > 0) {
                return afterC + contraction;
            }
        }
        // [^\r\n\p{L}\p{N}]?\p{L}+ : with the optional prefix char first, else a bare letter run.
        if (cls == UnicodeClasses.LETTER) {
            return letterRunEnd(s, afterC, end);
        }
        if (cls != UnicodeClasses.NUMBER && c != '\r' && c != '\n' && afterC < end
                && UnicodeClasses.classOf(s.codePointAt(afterC)) == UnicodeClasses.LETTER) {
            return letterRunEnd(s, afterC, end);
        }
        // \p{N} (or \p{N}{1,3})
        if (cls == UnicodeClasses.NUMBER) {
            int j = afterC;
            for (int k = 1; k < maxDigits && j < end; k++) {
                int d = s.codePointAt(j);
                if (UnicodeClasses.classOf(d) != UnicodeClasses.NUMBER) {
                    break;
                }
                j += Character.charCount(d);
            }
            return j;
        }
        // " ?[^\s\p{L}\p{N}]+[\r\n]*"
        if (cls == UnicodeClasses.OTHER) {
            return newlineRunEnd(s, otherRunEnd(s, i, end), end);
        }
        if (c == ' ' && afterC < end && UnicodeClasses.classOf(s.codePointAt(afterC)) == UnicodeClasses.OTHER) {
            return newlineRunEnd(s, otherRunEnd(s, afterC, end), end);
        }
        // c is whitespace. Whitespace characters are all in the BMP: one char each.
        int runEnd = i;
        int lastNewline = -1;
        while (runEnd < end) {
            char w = s.charAt(runEnd);
            if (UnicodeClasses.classOf(w) != UnicodeClasses.SPACE) {
                break;
            }
            if (w == '\r' || w == '\n') {
                lastNewline = runEnd;
            }
            runEnd++;
        }
        // \s*[\r\n]+ : \s* backs off until [\r\n]+ can start; it then ends after the run's last newline.
        if (lastNewline >= 0) {
            return lastNewline + 1;
        }
        // \s+(?!\S) : the whole run at the end of the text, else the run minus its last char
        // (which is followed by whitespace, satisfying the lookahead) if that leaves something.
        if (runEnd == end) {
            return runEnd;
        }
        if (runEnd - i >= 2) {
            return runEnd - 1;
        }
        // \s+
        return runEnd;
    }

    /** Chars after the apostrophe taken by a contraction, or 0. Case-insensitive as Unicode folds. */
    private static int contractionLength(String s, int at, int end) {
        char a = foldAscii(s.charAt(at));
        switch (a) {
            case 's', 't', 'm', 'd':
                return 1;
            case 'r', 'v':
                return at + 1 < end && foldAscii(s.charAt(at + 1)) == 'e' ? 2 : 0;
            case 'l':
                return at + 1 < end && foldAscii(s.charAt(at + 1)) == 'l' ? 2 : 0;
            default:
                return 0;
        }
    }

    /** Lower-cases ASCII letters; U+017F (long s) folds to 's'; anything else is returned unchanged. */
    private static char foldAscii(char c) {
        if (c >= 'A' && c <= 'Z') {
            return (char) (c + 32);
        }
        return c == '\u017F' ? 's' : c;
    }

    private static int letterRunEnd(String s, int j, int end) {
        while (j < end) {
            int cp = s.codePointAt(j);
            if (UnicodeClasses.classOf(cp) != UnicodeClasses.LETTER) {
                break;
            }
            j += Character.charCount(cp);
        }
        return j;
    }

    private static int otherRunEnd(String s, int j, int end) {
        while (j < end) {
            int cp = s.codePointAt(j);
            if (UnicodeClasses.classOf(cp) != UnicodeClasses.OTHER) {
                break;
            }
            j += Character.charCount(cp);
        }
        return j;
    }

    private static int newlineRunEnd(String s, int j, int end) {
        while (j < end && (s.charAt(j) == '\r' || s.charAt(j) == '\n')) {
            j++;
        }
        return j;
    }
}
