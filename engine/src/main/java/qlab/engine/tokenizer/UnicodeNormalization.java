package qlab.engine.tokenizer;

import java.text.Normalizer;

/**
 * A Unicode normalization form applied to text before pre-tokenization. Characters below a form's
 * threshold are left unchanged by that form (they are not composed, decomposed or mapped), so text
 * made only of them skips the JDK normalizer.
 */
enum UnicodeNormalization implements TextNormalizer {
    NFC(Normalizer.Form.NFC, 0x300),
    NFD(Normalizer.Form.NFD, 0xC0),
    NFKC(Normalizer.Form.NFKC, 0xA0),
    NFKD(Normalizer.Form.NFKD, 0xA0);

    private final Normalizer.Form form;
    private final char unchangedBelow;

    UnicodeNormalization(Normalizer.Form form, int unchangedBelow) {
        this.form = form;
        this.unchangedBelow = (char) unchangedBelow;
    }

    /** True when {@code text[start, end)} is certainly unchanged by this form. */
    @Override
    public boolean isTrivial(String text, int start, int end) {
        for (int i = start; i < end; i++) {
            if (text.charAt(i) >= unchangedBelow) {
                return false;
            }
        }
        return true;
    }

    @Override
    public String apply(String text) {
        return Normalizer.normalize(text, form);
    }
}
