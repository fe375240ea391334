package qlab.engine.tokenizer;

import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * Spells a pre-token as vocabulary symbols one character at a time, for vocabularies that are not
 * byte-level (SentencePiece-style BPE: {@code ▁the}, {@code <0xE4>}). As the reference's BPE model
 * does it, per Unicode character: the character's own token if the vocabulary has it; else, with
 * {@code byte_fallback}, the {@code <0xNN>} tokens of its UTF-8 bytes when all of them exist; else
 * the unknown token, consecutive unknown characters fused into one with {@code fuse_unk}; with no
 * unknown token the character is dropped. A pending unknown token is written out only when a
 * character with its own token (or the end) follows, so byte-fallback tokens of a later character
 * come before it, as in the reference.
 */
final class CharSymbols {
    private static final int NONE = -1;

    private final Map<String, Integer> vocab;
    /** Token id of each BMP character that is a token by itself, or NONE. */
    private final int[] bmpId = new int[0x10000];
    /** Token id of {@code <0xNN>} per byte, or NONE; null without byte fallback. */
    private final int[] byteToken;
    /** Id of the unknown token, or NONE when the model has none. */
    private final int unkId;
    private final boolean fuseUnk;

    CharSymbols(Map<String, Integer> vocab, int[] byteToken, int unkId, boolean fuseUnk) {
        this.vocab = vocab;
        this.byteToken = byteToken;
        this.unkId = unkId;
        this.fuseUnk = fuseUnk;
        java.util.Arrays.fill(bmpId, NONE);
        for (Map.Entry<String, Integer> e : vocab.entrySet()) {
            String token = e.getKey();
            if (token.length() == 1 && !Character.isSurrogate(token.charAt(0))) {
                bmpId[token.charAt(0)] = e.getValue();
            }
        }
    }

    /** The {@code <0xNN>} spelling of a byte, as byte-fallback vocabularies write it. */
    static String byteTokenText(int unsignedByte) {
        return String.format("<0x%02X>", unsignedByte);
    }

    /** Appends the symbols of {@code text[start, end)} to {@code out}; an unpaired surrogate counts as U+FFFD. */
    void spell(String text, int start, int end, IntList out) {
        int pendingUnk = 0; // unknown characters not yet written out
        int i = start;
        while (i < end) {
            int cp = text.codePointAt(i);
            int next = i + Character.charCount(cp);
            if (cp >= Character.MIN_SURROGATE && cp <= Character.MAX_SURROGATE) {
                cp = 0xFFFD;
            }
            int id = idOf(cp);
            if (id != NONE) {
                pendingUnk = flushUnk(pendingUnk, out);
                out.add(id);
            } else if (!spellBytes(cp, out)) {
                if (unkId != NONE) {
                    if (pendingUnk > 0 && !fuseUnk) {
                        out.add(unkId);
                    }
                    pendingUnk = 1;
                }
            }
            i = next;
        }
        flushUnk(pendingUnk, out);
    }

    private int flushUnk(int pendingUnk, IntList out) {
        if (pendingUnk > 0) {
            out.add(unkId);
        }
        return 0;
    }

    private int idOf(int cp) {
        if (cp < 0x10000) {
            return bmpId[cp];
        }
        Integer id = vocab.get(new String(Character.toChars(cp)));
        return id == null ? NONE : id;
    }

    /** Writes the byte tokens of {@code cp} when byte fallback is on and every one exists. */
    private boolean spellBytes(int cp, IntList out) {
        if (byteToken == null) {
            return false;
        }
        byte[] bytes = new String(Character.toChars(cp)).getBytes(StandardCharsets.UTF_8);
        for (byte b : bytes) {
            if (byteToken[b & 0xFF] == NONE) {
                return false;
            }
        }
        for (byte b : bytes) {
            out.add(byteToken[b & 0xFF]);
        }
        return true;
    }
}
