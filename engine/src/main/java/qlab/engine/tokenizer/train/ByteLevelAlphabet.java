package qlab.engine.tokenizer.train;

/**
 * The GPT-2 byte-level alphabet that Qwen2's tokenizer uses: every byte becomes one visible
 * character so that BPE can work on strings. Printable bytes ({@code 0x21-0x7E}, {@code 0xA1-0xAC},
 * {@code 0xAE-0xFF}) stand for themselves; the other 68 bytes (controls, space, {@code 0x7F-0xA0},
 * soft hyphen) map, in byte order, to {@code U+0100, U+0101, ...} — so the space byte is {@code 'Ġ'}
 * ({@code U+0120}) and {@code '\n'} is {@code 'Ċ'} ({@code U+010A}).
 *
 * <p>Base token ids follow the same order as Qwen's vocabulary: the printable bytes first (id 0 is
 * {@code '!'}), then the remapped ones (id 188 is byte 0, id 220 is the space byte).
 */
final class ByteLevelAlphabet {

    static final int SIZE = 256;

    /** byte value -> its visible character. */
    private static final char[] CHAR_OF_BYTE = new char[SIZE];
    /** byte value -> base token id. */
    private static final int[] ID_OF_BYTE = new int[SIZE];
    /** base token id -> byte value. */
    private static final int[] BYTE_OF_ID = new int[SIZE];

    static {
        int id = 0;
        for (int b = 0; b < SIZE; b++) {
            if (isPrintable(b)) {
                CHAR_OF_BYTE[b] = (char) b;
                ID_OF_BYTE[b] = id;
                BYTE_OF_ID[id++] = b;
            }
        }
        int shifted = 0;
        for (int b = 0; b < SIZE; b++) {
            if (!isPrintable(b)) {
                CHAR_OF_BYTE[b] = (char) (0x100 + shifted++);
                ID_OF_BYTE[b] = id;
                BYTE_OF_ID[id++] = b;
            }
        }
    }

    private ByteLevelAlphabet() {}

    private static boolean isPrintable(int b) {
        return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    }

    /** The visible character standing for byte {@code b} (0-255). */
    static char charOf(int b) {
        return CHAR_OF_BYTE[b];
    }

    /** The base token id of byte {@code b} (0-255). */
    static int idOf(int b) {
        return ID_OF_BYTE[b];
    }

    /** The byte (0-255) of base token {@code id} (0-255). */
    static int byteOf(int id) {
        return BYTE_OF_ID[id];
    }

    /** The byte-level string of {@code bytes}, one character per byte. */
    static String encode(byte[] bytes) {
        char[] out = new char[bytes.length];
        for (int i = 0; i < bytes.length; i++) {
            out[i] = CHAR_OF_BYTE[bytes[i] & 0xFF];
        }
        return new String(out);
    }
}
