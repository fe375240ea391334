package qlab.engine.tokenizer;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import qlab.engine.QlabException;

/**
 * Builds the {@link Tokenizer} that llama.cpp's GGUF metadata describes ({@code tokenizer.ggml.*}):
 * the same in-memory byte-level BPE that the tokenizer.json it was converted from gives. Normal
 * tokens form the BPE vocabulary; control and user-defined tokens are added tokens matched
 * literally (control tokens are special, skipped when decoding without specials); unused tokens
 * (the converter's {@code [PAD<id>]} placeholders) are left out. The pre-tokenizer name {@code tokenizer.ggml.pre} selects the normalizer, split pattern and merge
 * behaviour llama.cpp associates with it.
 */
final class GgmlTokenizerLoader {

    /** llama.cpp's token types (llama_token_type). */
    static final int NORMAL = 1;
    static final int UNKNOWN = 2;
    static final int CONTROL = 3;
    static final int USER_DEFINED = 4;
    static final int UNUSED = 5;
    static final int BYTE = 6;

    /** What a {@code tokenizer.ggml.pre} name stands for in a Hugging Face tokenizer.json. */
    private record PreTokenizer(List<TextNormalizer> normalizations, String splitPattern, boolean ignoreMerges) {}

    private static final Map<String, PreTokenizer> PRE = Map.of(
            "qwen2", new PreTokenizer(List.of(UnicodeNormalization.NFC), Qwen2PatternScanner.QWEN2_PATTERN, false),
            "llama-bpe", new PreTokenizer(List.of(), Qwen2PatternScanner.LLAMA3_PATTERN, true));

    private GgmlTokenizerLoader() {}

    static java.util.Optional<String> preName(String splitPattern) {
        return PRE.entrySet().stream().filter(e -> e.getValue().splitPattern().equals(splitPattern))
                .map(Map.Entry::getKey).findFirst();
    }

    static java.util.Set<String> preNames() {
        return new java.util.TreeSet<>(PRE.keySet());
    }

    static Tokenizer build(String file, String model, List<String> tokens, int[] tokenTypes, List<String> merges, String pre) {
        if (!model.equals("gpt2")) {
            throw new QlabException(file + ": field \"tokenizer.ggml.model\" is \"" + model
                    + "\", only \"gpt2\" (byte-level BPE) is supported");
        }
        PreTokenizer p = PRE.get(pre);
        if (p == null) {
            throw new QlabException(file + ": field \"tokenizer.ggml.pre\" is \"" + pre + "\", supported: " + preNames());
        }
        if (tokenTypes != null && tokenTypes.length != tokens.size()) {
            throw new QlabException(file + ": field \"tokenizer.ggml.token_type\" has " + tokenTypes.length
                    + " entries, tokenizer.ggml.tokens has " + tokens.size());
        }
        // Unused tokens are the converter's [PAD<id>] placeholders for embedding rows the tokenizer has no
        // token for: no text, never produced, and the trailing ones not counted, as in the tokenizer.json.
        int n = tokens.size();
        while (tokenTypes != null && n > 0 && tokenTypes[n - 1] == UNUSED) {
            n--;
        }
        Map<String, Integer> vocab = new HashMap<>(n * 2);
        List<String> addedContents = new ArrayList<>();
        List<Integer> addedIds = new ArrayList<>();
        boolean[] special = new boolean[n];
        String[] texts = tokens.subList(0, n).toArray(new String[0]);
        Map<String, Integer> tokenIds = new HashMap<>(n * 2);
        for (int id = 0; id < texts.length; id++) {
            int type = tokenTypes == null ? NORMAL : tokenTypes[id];
            if (type == UNUSED) {
                texts[id] = null;
                continue;
            }
            switch (type) {
                case NORMAL, BYTE, UNKNOWN -> vocab.put(texts[id], id);
                case CONTROL, USER_DEFINED -> {
                    if (texts[id].isEmpty()) {
                        throw new QlabException(file + ": field \"tokenizer.ggml.tokens[" + id + "]\" is an empty added token");
                    }
                    addedContents.add(texts[id]);
                    addedIds.add(id);
                    special[id] = type == CONTROL;
                }
                default -> throw new QlabException(file + ": field \"tokenizer.ggml.token_type[" + id + "]\" is " + type
                        + ", not a llama.cpp token type (1 to 6)");
            }
            tokenIds.put(texts[id], id);
        }
        int[] byteSymbol = TokenizerJsonLoader.byteSymbols(vocab, file, "tokenizer.ggml.tokens");
        List<String> left = new ArrayList<>(merges.size());
        List<String> right = new ArrayList<>(merges.size());
        for (int i = 0; i < merges.size(); i++) {
            String line = merges.get(i);
            int space = line.indexOf(' ');
            if (space < 0 || line.indexOf(' ', space + 1) >= 0) {
                throw new QlabException(file + ": field \"tokenizer.ggml.merges[" + i + "]\" is "
                        + TokenizerJsonLoader.showString(line) + ", expected two symbols separated by one space");
            }
            left.add(line.substring(0, space));
            right.add(line.substring(space + 1));
        }
        MergeTable table = TokenizerJsonLoader.resolveMerges(vocab, left, right, file, "tokenizer.ggml.merges",
                "tokenizer.ggml.tokens");
        PieceSplitter splitter = Qwen2PatternScanner.forPattern(p.splitPattern());
        // Added tokens of a GGUF are matched as written (llama.cpp does not normalize them).
        return new Tokenizer(new AddedTokenMatcher(addedContents, addedIds), new AddedTokenMatcher(List.of(), List.of()),
                p.normalizations(), List.of(splitter), new BpeModel(vocab, byteSymbol, table, p.ignoreMerges()),
                tokenIds, texts, special, null, new int[0], new int[0]);
    }
}
