package qlab.engine.tokenizer;

import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * A Split pre-tokenizer driven by java.util.regex, with the pattern translated from the reference's
 * Oniguruma syntax so that it means the same thing: {@code \s} becomes the White_Space set,
 * {@code \d} and {@code \w} their Unicode definitions, {@code (?i} Unicode case folding, {@code .}
 * "anything but \n". Constructs whose meaning differs between the engines and that we do not
 * translate are refused: the caller reports them as a load error naming the field.
 */
final class TranslatedRegexSplitter implements PieceSplitter {
    /** Oniguruma's Unicode {@code \s}: U+0009..U+000D, U+0085, Zs, Zl, Zp. */
    private static final String SPACE_ITEMS = "\\x{9}-\\x{D}\\x{85}\\p{Zs}\\p{Zl}\\p{Zp}";
    /** Oniguruma's Unicode {@code \w}: letters, marks, decimal digits, connector punctuation. */
    private static final String WORD_ITEMS = "\\p{L}\\p{M}\\p{Nd}\\p{Pc}";
    private static final Set<String> CATEGORIES = Set.of("L", "Lu", "Ll", "Lt", "Lm", "Lo", "M", "Mn", "Mc",
            "Me", "N", "Nd", "Nl", "No", "P", "Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po", "S", "Sm", "Sc", "Sk",
            "So", "Z", "Zs", "Zl", "Zp", "C", "Cc", "Cf", "Co", "Cn");
    /** Letter pairs that a single character folds to (ß→ss, ﬅ→st, ﬀ→ff, ﬁ→fi, ﬂ→fl): Java folds one char at a time. */
    private static final Set<String> MULTI_CHAR_FOLDS = Set.of("ss", "st", "ff", "fi", "fl");

    /** Thrown for a pattern we cannot translate faithfully; the message says what. */
    static final class UnsupportedPatternException extends Exception {
        UnsupportedPatternException(String message) {
            super(message);
        }
    }

    private final Pattern pattern;
    private final SplitBehavior behavior;
    private final boolean invert;

    /**
     * @param removeMatches false: matches and the text between them are both pieces ("Isolated");
     *                      true: only the text between matches is kept ("Removed")
     */
    TranslatedRegexSplitter(Pattern pattern, boolean removeMatches) {
        this(pattern, removeMatches ? SplitBehavior.REMOVED : SplitBehavior.ISOLATED, false);
    }

    /** @param invert the pattern matches the pieces rather than the delimiters (the reference's {@code invert}) */
    TranslatedRegexSplitter(Pattern pattern, SplitBehavior behavior, boolean invert) {
        this.pattern = pattern;
        this.behavior = behavior;
        this.invert = invert;
    }

    @Override
    public void split(String text, int start, int end, PieceConsumer out) {
        Matcher m = pattern.matcher(text).region(start, end);
        // The reference's regexes see only the piece: no lookaround past its edges.
        m.useTransparentBounds(false).useAnchoringBounds(true);
        if (!invert && (behavior == SplitBehavior.ISOLATED || behavior == SplitBehavior.REMOVED)) {
            boolean removeMatches = behavior == SplitBehavior.REMOVED;
            int last = start;
            while (m.find()) {
                if (m.end() == m.start()) {
                    continue;
                }
                if (m.start() > last) {
                    out.accept(text, last, m.start());
                }
                if (!removeMatches) {
                    out.accept(text, m.start(), m.end());
                }
                last = m.end();
            }
            if (last < end) {
                out.accept(text, last, end);
            }
            return;
        }
        // General case: list the stretches (delimiter or not), then let the behavior group them.
        int[] bounds = new int[16];
        boolean[] isMatch = new boolean[8];
        int count = 0;
        int last = start;
        while (true) {
            boolean found = m.find();
            int matchStart = found ? m.start() : end;
            int matchEnd = found ? m.end() : end;
            if (found && matchEnd == matchStart) {
                continue;
            }
            for (int pass = 0; pass < 2; pass++) {
                int from = pass == 0 ? last : matchStart;
                int to = pass == 0 ? matchStart : matchEnd;
                if (to > from) {
                    if (count == isMatch.length) {
                        isMatch = java.util.Arrays.copyOf(isMatch, count * 2);
                        bounds = java.util.Arrays.copyOf(bounds, count * 4);
                    }
                    bounds[2 * count] = from;
                    bounds[2 * count + 1] = to;
                    isMatch[count++] = (pass == 1) != invert;
                }
            }
            if (!found) {
                break;
            }
            last = matchEnd;
        }
        behavior.emit(text, bounds, isMatch, count, out);
    }

    /** A literal string splitter ({@code "pattern": {"String": ...}}). */
    static Pattern literal(String s) {
        return Pattern.compile(Pattern.quote(s));
    }

    static Pattern translate(String onig) throws UnsupportedPatternException {
        StringBuilder out = new StringBuilder(onig.length() * 2);
        int i = 0;
        int classDepth = 0;
        // Stack of "is this group case-insensitive" so literal checks know where they stand.
        java.util.ArrayDeque<Boolean> groups = new java.util.ArrayDeque<>();
        boolean caseInsensitive = false;
        StringBuilder literalRun = new StringBuilder();
        while (i < onig.length()) {
            char c = onig.charAt(i);
            if (c != '\\' && !(Character.isLetter(c) && classDepth == 0)) {
                checkFolds(literalRun, caseInsensitive);
            }
            if (c == '\\') {
                if (i + 1 >= onig.length()) {
                    throw new UnsupportedPatternException("pattern ends with a lone backslash");
                }
                char e = onig.charAt(i + 1);
                i += 2;
                switch (e) {
                    case 's' -> out.append(classDepth > 0 ? SPACE_ITEMS : "[" + SPACE_ITEMS + "]");
                    case 'S' -> {
                        if (classDepth > 0) {
                            throw new UnsupportedPatternException("\\S inside a character class is not supported");
                        }
                        out.append("[^").append(SPACE_ITEMS).append(']');
                    }
                    case 'd' -> out.append("\\p{Nd}");
                    case 'D' -> out.append("\\P{Nd}");
                    case 'w' -> out.append(classDepth > 0 ? WORD_ITEMS : "[" + WORD_ITEMS + "]");
                    case 'W' -> {
                        if (classDepth > 0) {
                            throw new UnsupportedPatternException("\\W inside a character class is not supported");
                        }
                        out.append("[^").append(WORD_ITEMS).append(']');
                    }
                    case 'p', 'P' -> {
                        int close = onig.indexOf('}', i);
                        if (i >= onig.length() || onig.charAt(i) != '{' || close < 0) {
                            throw new UnsupportedPatternException("\\" + e + " without {Category}");
                        }
                        String name = onig.substring(i + 1, close);
                        if (!CATEGORIES.contains(name)) {
                            throw new UnsupportedPatternException("property \\" + e + "{" + name + "} is not supported");
                        }
                        out.append('\\').append(e).append('{').append(name).append('}');
                        i = close + 1;
                    }
                    case 'r', 'n', 't', 'f' -> out.append('\\').append(e);
                    case 'v' -> out.append("\\x{B}");
                    case 'x' -> {
                        int close;
                        if (i < onig.length() && onig.charAt(i) == '{' && (close = onig.indexOf('}', i)) > 0) {
                            out.append("\\x").append(onig, i, close + 1);
                            i = close + 1;
                        } else if (i + 2 <= onig.length() && isHex(onig, i, i + 2)) {
                            out.append("\\x{").append(onig, i, i + 2).append('}');
                            i += 2;
                        } else {
                            throw new UnsupportedPatternException("malformed \\x escape");
                        }
                    }
                    case 'u' -> {
                        if (i + 4 <= onig.length() && isHex(onig, i, i + 4)) {
                            out.append("\\x{").append(onig, i, i + 4).append('}');
                            i += 4;
                        } else {
                            throw new UnsupportedPatternException("malformed \\u escape");
                        }
                    }
                    default -> {
                        if (Character.isLetterOrDigit(e)) {
                            throw new UnsupportedPatternException("escape \\" + e + " is not supported");
                        }
                        out.append('\\').append(e);
                        if (classDepth == 0) {
                            literalRun.append(e);
                        }
                    }
                }
                continue;
            }
            if (classDepth > 0) {
                if (c == '[') {
                    throw new UnsupportedPatternException("nested character classes are not supported");
                }
                if (c == '&' && i + 1 < onig.length() && onig.charAt(i + 1) == '&') {
                    throw new UnsupportedPatternException("class intersection && is not supported");
                }
                if (c == ']') {
                    classDepth = 0;
                }
                if (caseInsensitive && Character.isLetter(c)) {
                    throw new UnsupportedPatternException("letters in a case-insensitive class are not supported");
                }
                out.append(c);
                i++;
                continue;
            }
            switch (c) {
                case '[' -> {
                    classDepth = 1;
                    out.append('[');
                    i++;
                    if (i < onig.length() && onig.charAt(i) == '^') {
                        out.append('^');
                        i++;
                    }
                    if (i < onig.length() && onig.charAt(i) == ']') {
                        throw new UnsupportedPatternException("a class starting with ] is not supported");
                    }
                }
                case '(' -> {
                    groups.push(caseInsensitive);
                    if (onig.startsWith("(?:", i) || onig.startsWith("(?=", i) || onig.startsWith("(?!", i)) {
                        out.append(onig, i, i + 3);
                        i += 3;
                    } else if (onig.startsWith("(?<=", i) || onig.startsWith("(?<!", i)) {
                        out.append(onig, i, i + 4);
                        i += 4;
                    } else if (onig.startsWith("(?i:", i)) {
                        out.append("(?iu:");
                        caseInsensitive = true;
                        i += 4;
                    } else if (onig.startsWith("(?", i)) {
                        throw new UnsupportedPatternException("group syntax " + onig.substring(i, Math.min(onig.length(), i + 4)) + " is not supported");
                    } else {
                        out.append("(?:");
                        i++;
                    }
                }
                case ')' -> {
                    if (groups.isEmpty()) {
                        throw new UnsupportedPatternException("unbalanced )");
                    }
                    caseInsensitive = groups.pop();
                    out.append(')');
                    i++;
                }
                case '.' -> {
                    out.append("[^\\n]");
                    i++;
                }
                case '^', '$' -> throw new UnsupportedPatternException("anchors ^ and $ are not supported (line semantics differ)");
                default -> {
                    if (Character.isLetter(c)) {
                        if (caseInsensitive && c >= 0x80) {
                            throw new UnsupportedPatternException("non-ASCII letters under (?i) are not supported");
                        }
                        literalRun.append(Character.toLowerCase(c));
                    }
                    out.append(c);
                    i++;
                }
            }
        }
        checkFolds(literalRun, caseInsensitive);
        if (classDepth > 0 || !groups.isEmpty()) {
            throw new UnsupportedPatternException("unbalanced brackets");
        }
        try {
            return Pattern.compile(out.toString());
        } catch (PatternSyntaxException ex) {
            throw new UnsupportedPatternException("not a valid pattern: " + ex.getDescription());
        }
    }

    private static void checkFolds(StringBuilder literalRun, boolean caseInsensitive)
            throws UnsupportedPatternException {
        if (caseInsensitive) {
            for (int k = 0; k + 1 < literalRun.length(); k++) {
                String pair = literalRun.substring(k, k + 2);
                if (MULTI_CHAR_FOLDS.contains(pair)) {
                    throw new UnsupportedPatternException("case-insensitive \"" + pair
                            + "\" (a single character folds to it) is not supported");
                }
            }
        }
        literalRun.setLength(0);
    }

    private static boolean isHex(String s, int from, int to) {
        for (int k = from; k < to; k++) {
            if (Character.digit(s.charAt(k), 16) < 0) {
                return false;
            }
        }
        return true;
    }
}
