package qlab.engine.tokenizer;

/**
 * UTF-8 to UTF-16 with "substitution of maximal subparts" (Unicode chapter 3, U+FFFD policy): each
 * maximal prefix of a well-formed sequence that cannot be completed, and each byte that cannot start
 * one, becomes a single U+FFFD. This is what the reference (Rust {@code String::from_utf8_lossy})
 * does; a stock Java decoder can count replacement characters differently.
 */
final class Utf8Decoding {
    private Utf8Decoding() {
    }

    /** Bytes a sequence with this lead byte has in total, or 0 if the byte cannot start a sequence. */
    static int sequenceLength(int lead) {
        if (lead < 0x80) {
            return 1;
        } else if (lead >= 0xC2 && lead <= 0xDF) {
            return 2;
        } else if (lead >= 0xE0 && lead <= 0xEF) {
            return 3;
        } else if (lead >= 0xF0 && lead <= 0xF4) {
            return 4;
        }
        return 0;
    }

    /** Whether {@code b} may follow {@code lead} as the second byte (Table 3-7 narrows E0, ED, F0, F4). */
    private static boolean validSecond(int lead, int b) {
        return switch (lead) {
            case 0xE0 -> b >= 0xA0 && b <= 0xBF;
            case 0xED -> b >= 0x80 && b <= 0x9F;
            case 0xF0 -> b >= 0x90 && b <= 0xBF;
            case 0xF4 -> b >= 0x80 && b <= 0x8F;
            default -> b >= 0x80 && b <= 0xBF;
        };
    }

    /**
     * Length of the valid prefix of the sequence starting at {@code pos}: equals
     * {@link #sequenceLength} when the sequence is complete and well formed; smaller when it is
     * cut short by an invalid byte or by {@code end} (0 when the lead byte is invalid).
     */
    static int validPrefix(byte[] bytes, int pos, int end) {
        int lead = bytes[pos] & 0xFF;
        int need = sequenceLength(lead);
        if (need <= 1) {
            return need;
        }
        int k = 1;
        while (k < need && pos + k < end) {
            int b = bytes[pos + k] & 0xFF;
            boolean ok = k == 1 ? validSecond(lead, b) : (b >= 0x80 && b <= 0xBF);
            if (!ok) {
                break;
            }
            k++;
        }
        return k;
    }

    /**
     * Decodes {@code bytes[start, end)} into {@code out}. When {@code holdIncompleteTail} is set, a
     * trailing sequence that is valid so far but unfinished is left undecoded; the return value is
     * the position where decoding stopped (== end unless something was held back).
     */
    static int decode(byte[] bytes, int start, int end, StringBuilder out, boolean holdIncompleteTail) {
        int pos = start;
        while (pos < end) {
            int lead = bytes[pos] & 0xFF;
            if (lead < 0x80) {
                out.append((char) lead);
                pos++;
                continue;
            }
            int need = sequenceLength(lead);
            int valid = validPrefix(bytes, pos, end);
            if (need > 0 && valid == need) {
                int cp = lead & (0xFF >> (need + 1));
                for (int k = 1; k < need; k++) {
                    cp = (cp << 6) | (bytes[pos + k] & 0x3F);
                }
                out.appendCodePoint(cp);
                pos += need;
            } else if (holdIncompleteTail && need > 0 && pos + valid == end) {
                return pos;
            } else {
                out.append('\uFFFD');
                pos += Math.max(valid, 1);
            }
        }
        return pos;
    }

    static String decode(byte[] bytes, int length) {
        StringBuilder out = new StringBuilder(length);
        decode(bytes, 0, length, out, false);
        return out.toString();
    }
}
