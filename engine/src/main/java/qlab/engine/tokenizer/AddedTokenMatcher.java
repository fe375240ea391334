package qlab.engine.tokenizer;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Finds added tokens (such as {@code <|im_end|>}) in text the way the reference does: the leftmost
 * occurrence of any of them, and the longest one among those starting there. Text that matches no
 * token exactly (a near miss such as {@code <|im_end|}) is ordinary text.
 */
final class AddedTokenMatcher {
    private final BitSet firstChars = new BitSet(1 << 16);
    private final Map<Character, Candidate[]> byFirstChar = new HashMap<>();
    private final List<Candidate> all = new ArrayList<>();

    private record Candidate(String content, int id, int index, boolean lstrip, boolean rstrip) {
    }

    /** contents[i] has id ids[i]; contents are non-empty; no token strips whitespace. */
    AddedTokenMatcher(List<String> contents, List<Integer> ids) {
        this(contents, ids, java.util.Collections.nCopies(contents.size(), false),
                java.util.Collections.nCopies(contents.size(), false));
    }

    /** The same, with each token's {@code lstrip} and {@code rstrip} flags. */
    AddedTokenMatcher(List<String> contents, List<Integer> ids, List<Boolean> lstrip, List<Boolean> rstrip) {
        Map<Character, List<Candidate>> lists = new HashMap<>();
        for (int i = 0; i < contents.size(); i++) {
            String content = contents.get(i);
            Candidate candidate = new Candidate(content, ids.get(i), i, lstrip.get(i), rstrip.get(i));
            all.add(candidate);
            lists.computeIfAbsent(content.charAt(0), k -> new ArrayList<>()).add(candidate);
        }
        for (Map.Entry<Character, List<Candidate>> e : lists.entrySet()) {
            List<Candidate> list = e.getValue();
            list.sort(Comparator.comparingInt((Candidate c) -> c.content.length()).reversed());
            byFirstChar.put(e.getKey(), list.toArray(new Candidate[0]));
            firstChars.set(e.getKey());
        }
    }

    boolean isEmpty() {
        return byFirstChar.isEmpty();
    }

    /**
     * Finds the next token in {@code text[from, to)}. Returns its position as
     * {@code (start << 32) | token index} where {@link #idOf}/{@link #lengthOf} decode the rest, or -1.
     */
    long find(String text, int from, int to) {
        for (int i = from; i < to; i++) {
            char c = text.charAt(i);
            if (!firstChars.get(c)) {
                continue;
            }
            Candidate[] candidates = byFirstChar.get(c);
            for (int k = 0; k < candidates.length; k++) {
                String content = candidates[k].content;
                if (i + content.length() <= to && text.startsWith(content, i)) {
                    return ((long) i << 32) | candidates[k].index;
                }
            }
        }
        return -1;
    }

    static int startOf(long match) {
        return (int) (match >>> 32);
    }

    int idOf(long match) {
        return candidate(match).id;
    }

    int lengthOf(long match) {
        return candidate(match).content.length();
    }

    boolean lstripOf(long match) {
        return candidate(match).lstrip;
    }

    boolean rstripOf(long match) {
        return candidate(match).rstrip;
    }

    private Candidate candidate(long match) {
        return all.get((int) match);
    }
}
