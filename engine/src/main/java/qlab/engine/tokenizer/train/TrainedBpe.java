package qlab.engine.tokenizer.train;

import java.util.List;

/**
 * A trained byte-level BPE tokenizer.
 *
 * @param tokens        BPE vocabulary, index = token id: the 256 byte-level characters
 *                      ({@link ByteLevelAlphabet} order), then one token per merge in merge order
 * @param merges        merge rules in rank order (rank 0 is applied first)
 * @param specialTokens added tokens, with ids {@code tokens.size()}, {@code tokens.size() + 1}, ...
 */
public record TrainedBpe(List<String> tokens, List<Merge> merges, List<String> specialTokens) {

    /** Rule "token {@code left} followed by token {@code right} becomes token {@code result}" (ids). */
    public record Merge(int left, int right, int result) {}

    public TrainedBpe {
        tokens = List.copyOf(tokens);
        merges = List.copyOf(merges);
        specialTokens = List.copyOf(specialTokens);
    }

    /** Ids in use: BPE tokens plus special tokens. A model's vocab_size must be at least this. */
    public int size() {
        return tokens.size() + specialTokens.size();
    }

    /** The id of special token {@code content}, or -1 when it is not one of ours. */
    public int specialTokenId(String content) {
        int i = specialTokens.indexOf(content);
        return i < 0 ? -1 : tokens.size() + i;
    }
}
