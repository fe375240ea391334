package qlab.engine.chat;

/** Python's {@code str} whitespace methods, which chat templates call ({@code trim}, {@code strip}, {@code lstrip}). */
final class PythonText {
    private PythonText() {
    }

    /**
     * Python's {@code str.isspace} for one character: the C0 separators U+0009..U+000D and U+001C..U+001F,
     * U+0085, and the space separators and line/paragraph separators (Zs, Zl, Zp). Java's
     * {@link Character#isWhitespace} differs (it leaves out U+00A0, U+2007 and U+202F).
     */
    static boolean isSpace(int cp) {
        if (cp <= 0x20) {
            return cp == 0x20 || (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x1F);
        }
        if (cp == 0x85) {
            return true;
        }
        int type = Character.getType(cp);
        return type == Character.SPACE_SEPARATOR || type == Character.LINE_SEPARATOR
                || type == Character.PARAGRAPH_SEPARATOR;
    }

    /** {@code s.strip()}: whitespace removed from both ends. */
    static String strip(String s) {
        int from = 0;
        int to = s.length();
        while (from < to && isSpace(s.charAt(from))) {
            from++;
        }
        while (to > from && isSpace(s.charAt(to - 1))) {
            to--;
        }
        return s.substring(from, to);
    }

    /** {@code s.strip(chars)} with one character: that character removed from both ends. */
    static String strip(String s, char c) {
        return rstrip(lstrip(s, c), c);
    }

    /** {@code s.lstrip(c)}. */
    static String lstrip(String s, char c) {
        int from = 0;
        while (from < s.length() && s.charAt(from) == c) {
            from++;
        }
        return s.substring(from);
    }

    /** {@code s.rstrip(c)}. */
    static String rstrip(String s, char c) {
        int to = s.length();
        while (to > 0 && s.charAt(to - 1) == c) {
            to--;
        }
        return s.substring(0, to);
    }
}
