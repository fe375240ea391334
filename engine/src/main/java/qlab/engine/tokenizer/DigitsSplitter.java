package qlab.engine.tokenizer;

/**
 * The {@code Digits} pre-tokenizer: numeric characters (general categories Nd, Nl, No) are cut from
 * the rest, each one on its own with {@code individual_digits}, otherwise as maximal runs.
 */
final class DigitsSplitter implements PieceSplitter {
    private final boolean individualDigits;

    DigitsSplitter(boolean individualDigits) {
        this.individualDigits = individualDigits;
    }

    @Override
    public void split(String text, int start, int end, PieceConsumer out) {
        int i = start;
        while (i < end) {
            int cp = text.codePointAt(i);
            boolean digit = UnicodeClasses.classOf(cp) == UnicodeClasses.NUMBER;
            int j = i + Character.charCount(cp);
            if (!digit || !individualDigits) {
                while (j < end) {
                    int next = text.codePointAt(j);
                    if ((UnicodeClasses.classOf(next) == UnicodeClasses.NUMBER) != digit) {
                        break;
                    }
                    j += Character.charCount(next);
                }
            }
            out.accept(text, i, j);
            i = j;
        }
    }
}
