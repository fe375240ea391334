package qlab.engine.tokenizer;

import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * The BPE model: turns one pre-token into ids. A byte-level model spells the pre-token's UTF-8 bytes
 * as the ids of their byte-alphabet symbols; a character-level model (SentencePiece-style) spells it
 * one character at a time ({@link CharSymbols}). {@link BpeMerger} then merges the symbols; results
 * are cached per pre-token text.
 */
final class BpeModel {
    private final Map<String, Integer> vocab;
    /** Byte-level: vocabulary id of each byte's alphabet character; null for a character-level model. */
    private final int[] byteSymbol;
    /** Character-level spelling; null for a byte-level model. */
    private final CharSymbols charSymbols;
    private final BpeMerger merger;
    private final boolean ignoreMerges;
    private final PieceCache cache = new PieceCache(1 << 16);

    /**
     * @param byteSymbol vocabulary id of each byte's alphabet character (all 256 must exist)
     * @param ignoreMerges when set, a pre-token that is itself a vocabulary entry becomes that one id
     *                     without merging (the reference's {@code ignore_merges})
     */
    BpeModel(Map<String, Integer> vocab, int[] byteSymbol, MergeTable merges, boolean ignoreMerges) {
        this(vocab, byteSymbol, null, merges, ignoreMerges);
    }

    /** A character-level model (no byte-level alphabet). */
    BpeModel(Map<String, Integer> vocab, CharSymbols charSymbols, MergeTable merges, boolean ignoreMerges) {
        this(vocab, null, charSymbols, merges, ignoreMerges);
    }

    private BpeModel(Map<String, Integer> vocab, int[] byteSymbol, CharSymbols charSymbols, MergeTable merges,
                     boolean ignoreMerges) {
        this.vocab = vocab;
        this.byteSymbol = byteSymbol;
        this.charSymbols = charSymbols;
        this.merger = new BpeMerger(merges);
        this.ignoreMerges = ignoreMerges;
    }

    BpeMerger merger() {
        return merger;
    }

    /** Appends the ids of pre-token {@code text[start, end)}. */
    void encodePiece(String text, int start, int end, IntList out) {
        boolean cacheable = end - start <= PieceCache.MAX_KEY_CHARS;
        int hash = 0;
        if (cacheable) {
            hash = PieceCache.hash(text, start, end);
            int[] cached = cache.get(text, start, end, hash);
            if (cached != null) {
                out.addAll(cached);
                return;
            }
        }
        int[] ids = encodeUncached(text, start, end);
        if (cacheable) {
            cache.put(text, start, end, hash, ids);
        }
        out.addAll(ids);
    }

    int[] encodeUncached(String text, int start, int end) {
        if (charSymbols != null) {
            return encodeCharLevel(text, start, end);
        }
        byte[] bytes = utf8(text, start, end);
        if (ignoreMerges) {
            Integer whole = vocab.get(ByteLevelAlphabet.spell(bytes, bytes.length));
            if (whole != null) {
                return new int[] {whole};
            }
        }
        int[] symbols = new int[bytes.length];
        for (int i = 0; i < bytes.length; i++) {
            symbols[i] = byteSymbol[bytes[i] & 0xFF];
        }
        int n = merger.merge(symbols, symbols.length);
        return n == symbols.length ? symbols : java.util.Arrays.copyOf(symbols, n);
    }

    private int[] encodeCharLevel(String text, int start, int end) {
        if (ignoreMerges) {
            Integer whole = vocab.get(text.substring(start, end));
            if (whole != null) {
                return new int[] {whole};
            }
        }
        IntList spelled = new IntList(end - start);
        charSymbols.spell(text, start, end, spelled);
        int[] symbols = spelled.toArray();
        int n = merger.merge(symbols, symbols.length);
        return n == symbols.length ? symbols : java.util.Arrays.copyOf(symbols, n);
    }

    /** UTF-8 bytes of {@code text[start, end)}; an unpaired surrogate is encoded as U+FFFD. */
    static byte[] utf8(String text, int start, int end) {
        boolean ascii = true;
        for (int i = start; i < end && ascii; i++) {
            ascii = text.charAt(i) < 0x80;
        }
        if (ascii) {
            byte[] b = new byte[end - start];
            for (int i = start; i < end; i++) {
                b[i - start] = (byte) text.charAt(i);
            }
            return b;
        }
        // String.getBytes would write '?' for an unpaired surrogate; U+FFFD is what it stands for.
        StringBuilder clean = null;
        for (int i = start; i < end; i++) {
            char c = text.charAt(i);
            if (Character.isSurrogate(c)) {
                boolean paired = Character.isHighSurrogate(c) && i + 1 < end && Character.isLowSurrogate(text.charAt(i + 1));
                if (paired) {
                    if (clean != null) {
                        clean.append(c).append(text.charAt(i + 1));
                    }
                    i++;
                    continue;
                }
                if (clean == null) {
                    clean = new StringBuilder(end - start).append(text, start, i);
                }
                clean.append('\uFFFD');
            } else if (clean != null) {
                clean.append(c);
            }
        }
        String s = clean != null ? clean.toString() : text.substring(start, end);
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
