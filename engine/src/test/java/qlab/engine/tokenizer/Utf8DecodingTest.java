package qlab.engine.tokenizer;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Maximal-subpart UTF-8 decoding. */
class Utf8DecodingTest {
    private static byte[] bytes(int... values) {
        byte[] b = new byte[values.length];
        for (int i = 0; i < values.length; i++) {
            b[i] = (byte) values[i];
        }
        return b;
    }

    @Test
    void unicodeStandardExampleOfMaximalSubparts() {
        // The Unicode Standard's example (chapter 3, "U+FFFD Substitution of Maximal Subparts").
        byte[] b = bytes(0x61, 0xF1, 0x80, 0x80, 0xE1, 0x80, 0xC2, 0x62, 0x80, 0x63, 0x80, 0xBF, 0x64);
        assertEquals("a\uFFFD\uFFFD\uFFFDb\uFFFDc\uFFFD\uFFFDd", Utf8Decoding.decode(b, b.length));
    }

    @Test
    void surrogatesOverlongsAndOutOfRangeAreOneReplacementPerByte() {
        assertEquals("\uFFFD\uFFFD\uFFFD", Utf8Decoding.decode(bytes(0xED, 0xA0, 0x80), 3));
        assertEquals("\uFFFD\uFFFD", Utf8Decoding.decode(bytes(0xC0, 0xAF), 2));
        assertEquals("\uFFFD\uFFFD\uFFFD", Utf8Decoding.decode(bytes(0xE0, 0x80, 0xAF), 3));
        assertEquals("\uFFFD\uFFFD\uFFFD\uFFFD", Utf8Decoding.decode(bytes(0xF4, 0x90, 0x80, 0x80), 4));
        assertEquals("\uFFFD", Utf8Decoding.decode(bytes(0xF0, 0x9F, 0x98), 3));
        assertEquals("\uFFFDA", Utf8Decoding.decode(bytes(0xF0, 0x9F, 0x98, 0x41), 4));
    }

    @Test
    void validTextDecodesLikeTheJdk() {
        SplittableRandom random = new SplittableRandom(5);
        for (int trial = 0; trial < 2000; trial++) {
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < 20; i++) {
                int cp;
                do {
                    cp = random.nextInt(4) == 0 ? random.nextInt(0x110000) : random.nextInt(0x800);
                } while (cp >= 0xD800 && cp <= 0xDFFF);
                sb.appendCodePoint(cp);
            }
            byte[] b = sb.toString().getBytes(StandardCharsets.UTF_8);
            assertEquals(sb.toString(), Utf8Decoding.decode(b, b.length));
        }
    }

    @Test
    void holdingBackOnlyAffectsAnUnfinishedTail() {
        byte[] b = bytes(0x41, 0xE4, 0xB8);
        StringBuilder out = new StringBuilder();
        assertEquals(1, Utf8Decoding.decode(b, 0, 3, out, true));
        assertEquals("A", out.toString());
        byte[] invalid = bytes(0x41, 0xE4, 0x41);
        out.setLength(0);
        assertEquals(3, Utf8Decoding.decode(invalid, 0, 3, out, true));
        assertEquals("A\uFFFDA", out.toString());
    }
}
