package qlab.engine.tokenizer;

/**
 * The GPT-2 byte-level alphabet: every byte 0..255 is shown as one printable character so that
 * BPE vocabularies can be stored as text. Printable Latin-1 bytes map to themselves; the other 68
 * bytes (controls, space, DEL, NBSP, soft hyphen, ...) map to U+0100, U+0101, ... in byte order.
 */
final class ByteLevelAlphabet {
    private static final char[] BYTE_TO_CHAR = new char[256];
    /** Indexed by char; -1 for chars outside the alphabet. The alphabet lies below U+0144. */
    private static final int[] CHAR_TO_BYTE = new int[0x200];

    static {
        java.util.Arrays.fill(CHAR_TO_BYTE, -1);
        int next = 256;
        for (int b = 0; b < 256; b++) {
            boolean printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
            char c = printable ? (char) b : (char) next++;
            BYTE_TO_CHAR[b] = c;
            CHAR_TO_BYTE[c] = b;
        }
    }

    private ByteLevelAlphabet() {
    }

    static char charOf(int unsignedByte) {
        return BYTE_TO_CHAR[unsignedByte];
    }

    /** The byte a character stands for, or -1 when the character is not in the alphabet. */
    static int byteOf(char c) {
        return c < CHAR_TO_BYTE.length ? CHAR_TO_BYTE[c] : -1;
    }

    /**
     * The bytes a token string stands for, as the reference ByteLevel decoder computes them: the
     * alphabet's bytes when every character belongs to it, otherwise the token's own UTF-8 bytes
     * (this happens for added tokens such as ones containing spaces or non-ASCII text).
     */
    static byte[] tokenBytes(String token) {
        byte[] out = new byte[token.length()];
        for (int i = 0; i < token.length(); i++) {
            int b = byteOf(token.charAt(i));
            if (b < 0) {
                return token.getBytes(java.nio.charset.StandardCharsets.UTF_8);
            }
            out[i] = (byte) b;
        }
        return out;
    }

    /** The alphabet string of some bytes (how the vocabulary spells them). */
    static String spell(byte[] bytes, int length) {
        char[] chars = new char[length];
        for (int i = 0; i < length; i++) {
            chars[i] = BYTE_TO_CHAR[bytes[i] & 0xFF];
        }
        return new String(chars);
    }
}
