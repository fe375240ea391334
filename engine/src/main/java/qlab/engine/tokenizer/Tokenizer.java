package qlab.engine.tokenizer;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;

/**
 * A BPE tokenizer loaded from a Hugging Face {@code tokenizer.json}: byte-level (Qwen2/2.5/3, Llama 3,
 * GPT-2 style) or SentencePiece-style (Llama 2, Mistral, TinyLlama, Gemma: {@code ▁} for spaces,
 * {@code <0xNN>} byte fallback), reproducing the reference library's
 * {@code encode(text, add_special_tokens=false)} and {@code decode(ids, skip_special_tokens)} exactly.
 *
 * <p>Encoding: (1) added tokens found literally in the text become their ids, before anything else
 * (special or not; near misses are ordinary text); (2) each stretch of text between them is
 * normalized (e.g. NFC, or a {@code ▁} prepended and spaces replaced), (3) cut into pre-tokens by
 * the file's pre-tokenizer (Split pattern, ByteLevel regex, Metaspace, or none), (4) each pre-token
 * is spelled as symbols (UTF-8 bytes in the byte-level alphabet, or characters with byte fallback)
 * and merged by BPE. Byte-level decoding maps tokens back to bytes and decodes UTF-8, replacing each
 * maximal invalid subsequence with one U+FFFD; other tokenizers run the file's decoder chain
 * ({@link DecoderChain}). Instances are immutable apart from an internal cache and are thread-safe.
 */
public final class Tokenizer {
    private final AddedTokenMatcher rawAddedTokens;
    private final AddedTokenMatcher normalizedAddedTokens;
    private final List<TextNormalizer> normalizations;
    private final List<PieceSplitter> preTokenizers;
    private final BpeModel model;
    private final Map<String, Integer> tokenIds;
    private final String[] tokenTexts;
    /** Byte-level tokenizers: the bytes of each token; null otherwise. */
    private final byte[][] tokenBytes;
    /** Other tokenizers: the decoder chain; null for byte-level ones. */
    private final DecoderChain decoderChain;
    private final boolean[] special;
    /** Ids the post-processor puts before and after the text when special tokens are added (e.g. BOS). */
    private final int[] specialBefore;
    private final int[] specialAfter;

    /**
     * @param decoderChain  null for a byte-level tokenizer (ByteLevel decoder), else the file's decoder
     * @param specialBefore ids put before the text by {@link #encode(String, boolean)} with special tokens
     * @param specialAfter  ids put after it
     */
    Tokenizer(AddedTokenMatcher rawAddedTokens, AddedTokenMatcher normalizedAddedTokens,
              List<TextNormalizer> normalizations, List<PieceSplitter> preTokenizers, BpeModel model,
              Map<String, Integer> tokenIds, String[] tokenTexts, boolean[] special, DecoderChain decoderChain,
              int[] specialBefore, int[] specialAfter) {
        this.rawAddedTokens = rawAddedTokens;
        this.normalizedAddedTokens = normalizedAddedTokens;
        this.normalizations = List.copyOf(normalizations);
        this.preTokenizers = List.copyOf(preTokenizers);
        this.model = model;
        this.tokenIds = tokenIds;
        this.tokenTexts = tokenTexts;
        this.special = special;
        this.decoderChain = decoderChain;
        this.specialBefore = specialBefore.clone();
        this.specialAfter = specialAfter.clone();
        this.tokenBytes = decoderChain != null ? null : new byte[tokenTexts.length][];
        for (int id = 0; tokenBytes != null && id < tokenTexts.length; id++) {
            if (tokenTexts[id] != null) {
                tokenBytes[id] = ByteLevelAlphabet.tokenBytes(tokenTexts[id]);
            }
        }
    }

    /**
     * Loads a tokenizer from a {@code tokenizer.json} file or from a directory containing one.
     *
     * @throws qlab.engine.QlabException for a missing or malformed file, or a field this
     *         implementation does not support (the message names the file and the field)
     */
    public static Tokenizer load(Path fileOrDirectory) {
        return TokenizerJsonLoader.load(fileOrDirectory);
    }

    /**
     * The tokenizer llama.cpp's GGUF metadata describes: {@code tokenizer.ggml.model} (only
     * "gpt2", byte-level BPE), {@code tokens}, {@code token_type} (null: all normal),
     * {@code merges} ("a b") and {@code pre} (the pre-tokenizer's name, e.g. "qwen2").
     *
     * @throws qlab.engine.QlabException naming {@code file} and the field that is unsupported or inconsistent
     */
    public static Tokenizer fromGgml(String file, String model, List<String> tokens, int[] tokenTypes,
            List<String> merges, String pre) {
        return GgmlTokenizerLoader.build(file, model, tokens, tokenTypes, merges, pre);
    }

    /** llama.cpp's name ({@code tokenizer.ggml.pre}) of the pre-tokenizer that splits by a tokenizer.json pattern. */
    public static java.util.Optional<String> ggmlPreTokenizerName(String splitPattern) {
        return GgmlTokenizerLoader.preName(splitPattern);
    }

    /** The {@code tokenizer.ggml.pre} names qlab reads and writes. */
    public static java.util.Set<String> ggmlPreTokenizerNames() {
        return GgmlTokenizerLoader.preNames();
    }

    // ---------------------------------------------------------------- encoding

    /**
     * The token ids of {@code text}; no special tokens are added (none of BOS/EOS/template), but
     * added-token strings in the text (e.g. {@code <|im_start|>}) become their single ids. An
     * unpaired surrogate, which the reference cannot receive (its strings are UTF-8), is encoded as
     * U+FFFD.
     */
    public int[] encode(String text) {
        IntList out = new IntList(text.length() / 3 + 8);
        cutAtAddedTokens(rawAddedTokens, text, 0, text.length(), out,
                (t, s, e) -> encodeNormalizedSegment(t, s, e, s == 0, out));
        return out.toArray();
    }

    /**
     * The reference's {@code encode(text, add_special_tokens)}: with special tokens, the ids the file's
     * post-processor ({@code TemplateProcessing}) puts around the text, such as Llama 2's {@code <s>}.
     */
    public int[] encode(String text, boolean addSpecialTokens) {
        int[] ids = encode(text);
        if (!addSpecialTokens || (specialBefore.length == 0 && specialAfter.length == 0)) {
            return ids;
        }
        int[] out = new int[specialBefore.length + ids.length + specialAfter.length];
        System.arraycopy(specialBefore, 0, out, 0, specialBefore.length);
        System.arraycopy(ids, 0, out, specialBefore.length, ids.length);
        System.arraycopy(specialAfter, 0, out, specialBefore.length + ids.length, specialAfter.length);
        return out;
    }

    /** Receives a stretch {@code text[start, end)} between added tokens. */
    @FunctionalInterface
    private interface Segments {
        void accept(String text, int start, int end);
    }

    /**
     * Finds the added tokens in {@code text[from, to)}: each becomes its id in {@code out}, each non-empty stretch
     * between them goes to {@code segments}, in order. A token with {@code lstrip} / {@code rstrip} also takes the
     * whitespace before it (back to the previous token) / after it.
     */
    private static void cutAtAddedTokens(AddedTokenMatcher tokens, String text, int from, int to, IntList out,
                                         Segments segments) {
        int pos = from;
        while (pos < to) {
            long match = tokens.isEmpty() ? -1 : tokens.find(text, pos, to);
            if (match < 0) {
                segments.accept(text, pos, to);
                return;
            }
            int start = AddedTokenMatcher.startOf(match);
            int stop = start + tokens.lengthOf(match);
            if (tokens.lstripOf(match)) {
                while (start > pos && UnicodeClasses.classOf(text.charAt(start - 1)) == UnicodeClasses.SPACE) {
                    start--;
                }
            }
            if (tokens.rstripOf(match)) {
                while (stop < to && UnicodeClasses.classOf(text.charAt(stop)) == UnicodeClasses.SPACE) {
                    stop++;
                }
            }
            if (start > pos) {
                segments.accept(text, pos, start);
            }
            out.add(tokens.idOf(match));
            pos = stop;
        }
    }

    private void encodeNormalizedSegment(String text, int start, int end, boolean atInputStart, IntList out) {
        String segment = text;
        int from = start;
        int to = end;
        for (TextNormalizer form : normalizations) {
            if (!form.isTrivial(segment, from, to)) {
                segment = form.apply(segment.substring(from, to));
                from = 0;
                to = segment.length();
            }
        }
        int segmentStart = from;
        cutAtAddedTokens(normalizedAddedTokens, segment, from, to, out,
                (t, s, e) -> preTokenize(t, s, e, atInputStart && s == segmentStart, out));
    }

    /**
     * Runs the pre-tokenizer steps and the model over {@code text[start, end)}. A piece is at the start of
     * the input when the segment is and the piece begins where the segment does, in the segment's own text.
     */
    private void preTokenize(String text, int start, int end, boolean atInputStart, IntList out) {
        PieceSplitter.PieceConsumer sink = (t, s, e) -> model.encodePiece(t, s, e, out);
        for (int k = preTokenizers.size() - 1; k >= 0; k--) {
            PieceSplitter stage = preTokenizers.get(k);
            PieceSplitter.PieceConsumer next = sink;
            sink = atInputStart
                    ? (t, s, e) -> stage.split(t, s, e, t == text && s == start, next)
                    : (t, s, e) -> stage.split(t, s, e, next);
        }
        sink.accept(text, start, end);
    }

    // ---------------------------------------------------------------- decoding

    /**
     * The text of {@code ids}. Ids that name no token are dropped, as the reference does. With
     * {@code skipSpecial}, tokens flagged {@code special} in the file are dropped (other added
     * tokens such as {@code <think>} stay).
     */
    public String decode(int[] ids, boolean skipSpecial) {
        if (decoderChain != null) {
            return decodeByChain(ids, ids.length, skipSpecial);
        }
        int total = 0;
        for (int id : ids) {
            byte[] b = bytesOf(id, skipSpecial);
            total += b == null ? 0 : b.length;
        }
        byte[] bytes = new byte[total];
        int n = 0;
        for (int id : ids) {
            byte[] b = bytesOf(id, skipSpecial);
            if (b != null) {
                System.arraycopy(b, 0, bytes, n, b.length);
                n += b.length;
            }
        }
        return Utf8Decoding.decode(bytes, n);
    }

    /** Decodes {@code ids[0, n)} with the decoder chain of a tokenizer that is not byte-level. */
    String decodeByChain(int[] ids, int n, boolean skipSpecial) {
        List<String> tokens = new java.util.ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            String t = visibleText(ids[i], skipSpecial);
            if (t != null) {
                tokens.add(t);
            }
        }
        return decoderChain.decode(tokens);
    }

    /** The token's text as the decoder receives it, or null when the id is unknown or skipped. */
    String visibleText(int id, boolean skipSpecial) {
        if (id < 0 || id >= tokenTexts.length || (skipSpecial && special[id])) {
            return null;
        }
        return tokenTexts[id];
    }

    DecoderChain decoderChain() {
        return decoderChain;
    }

    /** {@code decode(ids, false)}. */
    public String decode(int[] ids) {
        return decode(ids, false);
    }

    /** A decoder for ids arriving one at a time, e.g. while generating. */
    public StreamingDecoder streamingDecoder(boolean skipSpecial) {
        return new StreamingDecoder(this, skipSpecial);
    }

    /** Byte-level tokenizers: the bytes token {@code id} decodes to, or null when it is unknown or skipped. */
    byte[] bytesOf(int id, boolean skipSpecial) {
        if (id < 0 || id >= tokenBytes.length || (skipSpecial && special[id])) {
            return null;
        }
        return tokenBytes[id];
    }

    BpeModel model() {
        return model;
    }

    // ---------------------------------------------------------------- vocabulary

    /** The id of a token given as written in the file (e.g. {@code <|im_end|>}), if it exists. */
    public OptionalInt tokenId(String token) {
        Integer id = tokenIds.get(token);
        return id == null ? OptionalInt.empty() : OptionalInt.of(id);
    }

    /** The token as written in the file (byte-level alphabet for vocabulary entries), or null. */
    public String tokenText(int id) {
        return id >= 0 && id < tokenTexts.length ? tokenTexts[id] : null;
    }

    /** Whether {@code id} is an added token flagged {@code special} (dropped by skip-special decoding). */
    public boolean isSpecial(int id) {
        return id >= 0 && id < special.length && special[id];
    }

    /** One more than the highest token id (vocabulary and added tokens); the model's own size may be larger. */
    public int vocabSize() {
        return tokenTexts.length;
    }
}
