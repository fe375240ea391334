package qlab.engine.tokenizer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The hand-written pattern scanner against java.util.regex running the translated pattern, and the
 * translation itself against the reference's (Oniguruma's) class definitions.
 */
class PreTokenizerAgreementTest {
    /** Characters where the pattern's alternatives and the class definitions disagree most easily. */
    private static final int[] TRICKY = {
        'a', 'Z', 's', 'S', 't', 'T', 'r', 'e', 'E', 'v', 'm', 'M', 'l', 'L', 'd', 'D', 'x', '\'', '\'', '\'',
        '0', '7', 0x0663 /* Arabic-Indic 3 */, 0x00BD /* ½ */, 0x2167 /* Ⅷ */, 0x017F /* ſ */, 0x212A /* Kelvin */,
        ' ', ' ', ' ', '\t', '\n', '\r', 0x0B, 0x0C, 0x85, 0xA0, 0x1680, 0x2003, 0x2028, 0x2029, 0x202F, 0x3000,
        0x1C, 0x1F, 0x200B, 0xFEFF, 0x00, 0x7F, '.', ',', '(', '"', '-', '_', '!', 0x0301, 0x0308, 0x20E3,
        0x4E2D, 0x6587, 0x3042, 0xAC00, 0x1F600, 0x1F44D, 0x1F3FD, 0x200D, 0x1D400 /* math bold A */,
        0x1D7CE /* math bold 0 */, 0x20000, 0xE000, 0x10FFFD, 0x02B0 /* modifier letter */, 0x0E01,
    };

    private static String randomText(SplittableRandom random, int length) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < length; i++) {
            sb.appendCodePoint(TRICKY[random.nextInt(TRICKY.length)]);
        }
        return sb.toString();
    }

    private static List<String> pieces(PieceSplitter splitter, String text) {
        List<String> out = new ArrayList<>();
        splitter.split(text, 0, text.length(), (t, s, e) -> out.add(t.substring(s, e)));
        return out;
    }

    private static void assertAgree(String pattern, List<String> texts) throws Exception {
        PieceSplitter scanner = Qwen2PatternScanner.forPattern(pattern);
        PieceSplitter regex = new TranslatedRegexSplitter(TranslatedRegexSplitter.translate(pattern), false);
        for (String text : texts) {
            List<String> expected = pieces(regex, text);
            assertEquals(expected, pieces(scanner, text), () -> "text " + escape(text));
            assertEquals(text, String.join("", expected));
        }
    }

    static String escape(String s) {
        StringBuilder sb = new StringBuilder();
        s.codePoints().forEach(cp -> sb.append(cp >= 0x20 && cp < 0x7F ? String.valueOf((char) cp) : String.format("\\u{%X}", cp)));
        return sb.toString();
    }

    private static List<String> randomTexts(int count, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        List<String> texts = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            texts.add(randomText(random, 1 + random.nextInt(40)));
        }
        return texts;
    }

    @Test
    void qwen2ScannerAgreesWithTranslatedRegexOnRandomText() throws Exception {
        assertAgree(Qwen2PatternScanner.QWEN2_PATTERN, randomTexts(20000, 1));
    }

    @Test
    void llama3ScannerAgreesWithTranslatedRegexOnRandomText() throws Exception {
        assertAgree(Qwen2PatternScanner.LLAMA3_PATTERN, randomTexts(20000, 2));
    }

    @Test
    void qwen2ScannerAgreesWithTranslatedRegexOnTheCorpus() throws Exception {
        TokenizerOracleTest.load();
        List<String> texts = TokenizerOracleTest.corpusTexts();
        assertAgree(Qwen2PatternScanner.QWEN2_PATTERN, texts);
        assertEquals(3000, texts.size());
    }

    @Test
    void translatedWhitespaceIsUnicodeWhiteSpace() throws Exception {
        Pattern s = TranslatedRegexSplitter.translate("\\s");
        for (int cp : new int[] {'\t', '\n', 0x0B, 0x0C, '\r', ' ', 0x85, 0xA0, 0x1680, 0x2000, 0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000}) {
            assertTrue(s.matcher(Character.toString(cp)).matches(), Integer.toHexString(cp));
        }
        for (int cp : new int[] {0x1C, 0x1D, 0x1E, 0x1F, 0x200B, 0xFEFF, 0x180E, 'a'}) {
            assertTrue(!s.matcher(Character.toString(cp)).matches(), Integer.toHexString(cp));
        }
        Pattern contraction = TranslatedRegexSplitter.translate("(?i:'s|'ll)");
        assertTrue(contraction.matcher("'S").matches());
        assertTrue(contraction.matcher("'\u017F").matches());
        assertTrue(contraction.matcher("'lL").matches());
        assertTrue(!TranslatedRegexSplitter.translate("'s").matcher("'S").matches());
    }

    @Test
    void untranslatablePatternsAreRefused() {
        for (String p : new String[] {"^a", "a$", "\\h", "[[a]]", "(?<name>a)", "(?i:ss)", "[a&&b]", "\\p{Greek}", "(a"}) {
            assertThrows(TranslatedRegexSplitter.UnsupportedPatternException.class,
                    () -> TranslatedRegexSplitter.translate(p), p);
        }
    }

    @Test
    void removedBehaviourKeepsOnlyTheGaps() throws Exception {
        PieceSplitter removed = new TranslatedRegexSplitter(TranslatedRegexSplitter.translate("\\s+"), true);
        assertEquals(List.of("a", "bc", "d"), pieces(removed, " a  bc\td "));
        PieceSplitter isolated = new TranslatedRegexSplitter(TranslatedRegexSplitter.translate("\\s+"), false);
        assertEquals(List.of(" ", "a", "  ", "bc", "\t", "d", " "), pieces(isolated, " a  bc\td "));
    }
}
