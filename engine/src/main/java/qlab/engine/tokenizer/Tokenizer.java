package qlab.engine.tokenizer;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;

/**
 * A byte-level BPE tokenizer loaded from a Hugging Face {@code tokenizer.json} (Qwen2/2.5/3, GPT-2
 * style), reproducing the reference library's {@code encode(text, add_special_tokens=false)} and
 * {@code decode(ids, skip_special_tokens)} exactly.
 *
 * <p>Encoding: (1) added tokens found literally in the text become their ids, before anything else
 * (special or not; near misses are ordinary text); (2) each stretch of text between them is
 * normalized (e.g. NFC), (3) cut into pre-tokens by the file's Split pattern / ByteLevel regex,
 * (4) each pre-token's UTF-8 bytes are spelled in the byte-level alphabet and merged by BPE.
 * Decoding maps tokens back to bytes and decodes UTF-8, replacing each maximal invalid subsequence
 * with one U+FFFD. Instances are immutable apart from an internal cache and are thread-safe.
 */
public final class Tokenizer {
    private final AddedTokenMatcher rawAddedTokens;
    private final AddedTokenMatcher normalizedAddedTokens;
    private final List<UnicodeNormalization> normalizations;
    private final List<PieceSplitter> preTokenizers;
    private final BpeModel model;
    private final Map<String, Integer> tokenIds;
    private final String[] tokenTexts;
    private final byte[][] tokenBytes;
    private final boolean[] special;

    Tokenizer(AddedTokenMatcher rawAddedTokens, AddedTokenMatcher normalizedAddedTokens,
              List<UnicodeNormalization> normalizations, List<PieceSplitter> preTokenizers, BpeModel model,
              Map<String, Integer> tokenIds, String[] tokenTexts, boolean[] special) {
        this.rawAddedTokens = rawAddedTokens;
        this.normalizedAddedTokens = normalizedAddedTokens;
        this.normalizations = List.copyOf(normalizations);
        this.preTokenizers = List.copyOf(preTokenizers);
        this.model = model;
        this.tokenIds = tokenIds;
        this.tokenTexts = tokenTexts;
        this.special = special;
        this.tokenBytes = new byte[tokenTexts.length][];
        for (int id = 0; id < tokenTexts.length; id++) {
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
        int pos = 0;
        int end = text.length();
        while (pos < end) {
            long match = rawAddedTokens.find(text, pos, end);
            int stop = match < 0 ? end : AddedTokenMatcher.startOf(match);
            if (stop > pos) {
                encodeNormalizedSegment(text, pos, stop, out);
            }
            if (match < 0) {
                break;
            }
            out.add(rawAddedTokens.idOf(match));
            pos = stop + rawAddedTokens.lengthOf(match);
        }
        return out.toArray();
    }

    private void encodeNormalizedSegment(String text, int start, int end, IntList out) {
        String segment = text;
        int from = start;
        int to = end;
        for (UnicodeNormalization form : normalizations) {
            if (!form.isTrivial(segment, from, to)) {
                segment = form.apply(segment.substring(from, to));
                from = 0;
                to = segment.length();
            }
        }
        if (normalizedAddedTokens.isEmpty()) {
            preTokenize(segment, from, to, out);
            return;
        }
        int pos = from;
        while (pos < to) {
            long match = normalizedAddedTokens.find(segment, pos, to);
            int stop = match < 0 ? to : AddedTokenMatcher.startOf(match);
            if (stop > pos) {
                preTokenize(segment, pos, stop, out);
            }
            if (match < 0) {
                break;
            }
            out.add(normalizedAddedTokens.idOf(match));
            pos = stop + normalizedAddedTokens.lengthOf(match);
        }
    }

    private void preTokenize(String text, int start, int end, IntList out) {
        PieceSplitter.PieceConsumer sink = (t, s, e) -> model.encodePiece(t, s, e, out);
        for (int k = preTokenizers.size() - 1; k >= 0; k--) {
            PieceSplitter stage = preTokenizers.get(k);
            PieceSplitter.PieceConsumer next = sink;
            sink = (t, s, e) -> stage.split(t, s, e, next);
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

    /** {@code decode(ids, false)}. */
    public String decode(int[] ids) {
        return decode(ids, false);
    }

    /** A decoder for ids arriving one at a time, e.g. while generating. */
    public StreamingDecoder streamingDecoder(boolean skipSpecial) {
        return new StreamingDecoder(this, skipSpecial);
    }

    /** The bytes token {@code id} decodes to, or null when it is unknown or skipped. */
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
