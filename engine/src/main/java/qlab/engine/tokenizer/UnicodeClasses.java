package qlab.engine.tokenizer;

/**
 * The character classes the pre-tokenizer patterns use, with the reference's (Oniguruma's) meaning:
 * {@code \p{L}} and {@code \p{N}} are Unicode general categories, and {@code \s} is U+0009..U+000D,
 * U+0085 and the Zs/Zl/Zp categories (the White_Space set; not Java's default {@code \s}, and not
 * {@link Character#isWhitespace}, which adds U+001C..U+001F and drops U+00A0).
 */
final class UnicodeClasses {
    static final int OTHER = 0;
    static final int LETTER = 1;
    static final int NUMBER = 2;
    static final int SPACE = 3;

    private static final byte[] ASCII = new byte[128];

    static {
        for (int c = 0; c < 128; c++) {
            ASCII[c] = (byte) classOfSlow(c);
        }
    }

    private UnicodeClasses() {
    }

    static int classOf(int cp) {
        return cp < 128 ? ASCII[cp] : classOfSlow(cp);
    }

    private static int classOfSlow(int cp) {
        if ((cp >= 0x09 && cp <= 0x0D) || cp == 0x85) {
            return SPACE;
        }
        return switch (Character.getType(cp)) {
            case Character.UPPERCASE_LETTER, Character.LOWERCASE_LETTER, Character.TITLECASE_LETTER,
                 Character.MODIFIER_LETTER, Character.OTHER_LETTER -> LETTER;
            case Character.DECIMAL_DIGIT_NUMBER, Character.LETTER_NUMBER, Character.OTHER_NUMBER -> NUMBER;
            case Character.SPACE_SEPARATOR, Character.LINE_SEPARATOR, Character.PARAGRAPH_SEPARATOR -> SPACE;
            default -> OTHER;
        };
    }
}
