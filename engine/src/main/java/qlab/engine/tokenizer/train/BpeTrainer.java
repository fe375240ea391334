package qlab.engine.tokenizer.train;

import java.nio.charset.StandardCharsets;
import java.text.Normalizer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import qlab.engine.QlabException;

/**
 * Trains a GPT-2/Qwen2-style byte-level BPE: NFC, {@link Qwen2PreTokenizer} pieces, the bytes of
 * each piece as base tokens, then greedy merges of the most frequent adjacent pair.
 *
 * <p>Rules that fix the result exactly (it depends only on the multiset of pieces, never on hash
 * or input order):
 * <ul>
 *   <li>A pair's count is the number of adjacent occurrences over all pieces, weighted by how often
 *       each piece occurs (overlapping occurrences, as in {@code aaa}, each count).</li>
 *   <li>The pair with the highest count is merged; among equal counts, the one with the smallest
 *       left token id, then the smallest right token id. Ids are base ids (Qwen's byte order,
 *       {@link ByteLevelAlphabet}) for bytes and creation order for merged tokens, so older tokens win.</li>
 *   <li>A merge rewrites every piece left to right, without overlap ({@code a a a} becomes {@code aa a}).</li>
 *   <li>Training stops when the BPE vocabulary plus the special tokens reaches the requested size, or
 *       when no pair occurs {@value #MIN_PAIR_COUNT} or more times.</li>
 *   <li>Should a merge produce a string that is already a token (two different splits of one
 *       string), the merge is kept and reuses that token's id, as the Hugging Face trainer does.</li>
 * </ul>
 *
 * <p>Incremental algorithm: counts and the list of pieces containing each pair are kept up to date by
 * the local changes each merge makes (only the neighbours of a merged occurrence change), and a
 * max-heap holds candidates with lazily corrected counts. Counts of existing pairs only fall, so a
 * popped candidate whose stored count is still current is the true maximum.
 */
public final class BpeTrainer {

    /** The special tokens Qwen2 puts right after its BPE vocabulary, in id order. */
    public static final List<String> QWEN_SPECIAL_TOKENS = List.of("<|endoftext|>", "<|im_start|>", "<|im_end|>");

    /** A pair seen once is not worth a token: it cannot shorten anything but the one piece it came from. */
    public static final int MIN_PAIR_COUNT = 2;

    private static final Comparator<Candidate> BEST_FIRST = Comparator.comparingLong(Candidate::count).reversed()
            .thenComparingInt(Candidate::left)
            .thenComparingInt(Candidate::right);

    private final int maxVocabSize;
    private final List<String> specialTokens;

    /**
     * @param maxVocabSize  the most ids the result may use, special tokens included (a model's vocab_size)
     * @param specialTokens added tokens appended after the BPE vocabulary, e.g. {@link #QWEN_SPECIAL_TOKENS}
     */
    public BpeTrainer(int maxVocabSize, List<String> specialTokens) {
        this.specialTokens = List.copyOf(specialTokens);
        if (new HashSet<>(this.specialTokens).size() != this.specialTokens.size()) {
            throw new QlabException("special tokens " + this.specialTokens + " contain a duplicate");
        }
        int minimum = ByteLevelAlphabet.SIZE + this.specialTokens.size();
        if (maxVocabSize < minimum) {
            throw new QlabException("vocab_size " + maxVocabSize + " is too small for a byte-level BPE: need at least "
                    + minimum + " (256 bytes + " + this.specialTokens.size() + " special tokens)");
        }
        this.maxVocabSize = maxVocabSize;
    }

    /** Trains on {@code texts} (each one a document; pieces never cross documents). */
    public TrainedBpe train(List<String> texts) {
        Map<String, long[]> pieceCounts = countPieces(texts);
        return new Run(pieceCounts, maxVocabSize - specialTokens.size()).train(specialTokens);
    }

    private static Map<String, long[]> countPieces(List<String> texts) {
        Map<String, long[]> counts = new HashMap<>();
        for (int t = 0; t < texts.size(); t++) {
            String text = texts.get(t);
            requireWellFormed(text, t);
            for (String piece : Qwen2PreTokenizer.split(Normalizer.normalize(text, Normalizer.Form.NFC))) {
                counts.computeIfAbsent(piece, k -> new long[1])[0]++;
            }
        }
        return counts;
    }

    /** UTF-8 cannot encode a lone surrogate; the JDK would silently write '?' instead. */
    private static void requireWellFormed(String text, int index) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                throw new QlabException("training text " + index + ": unpaired UTF-16 surrogate at char " + i);
            }
        }
    }

    private record Candidate(long count, int left, int right) {}

    /** Where one pair stands: its weighted count and the pieces it may occur in (may hold stale entries). */
    private static final class PairStats {
        long count;
        boolean merged;
        int[] pieces = new int[4];
        int size;

        void addPiece(int piece) {
            if (size > 0 && pieces[size - 1] == piece) {
                return;
            }
            if (size == pieces.length) {
                pieces = Arrays.copyOf(pieces, size * 2);
            }
            pieces[size++] = piece;
        }
    }

    /** The mutable state of one training run. */
    private static final class Run {
        private final int bpeVocabTarget;
        /** piece -> its symbols (token ids); only the first {@code lengths[piece]} are live. */
        private final int[][] symbols;
        private final int[] lengths;
        private final long[] frequency;
        /** piece -> the merge step that last rewrote it, to visit each piece once per merge. */
        private final int[] visited;

        private final List<String> tokens = new ArrayList<>();
        private final Map<String, Integer> idOfToken = new HashMap<>();
        private final List<TrainedBpe.Merge> merges = new ArrayList<>();
        private final Map<Long, PairStats> pairs = new HashMap<>();
        private final PriorityQueue<Candidate> heap = new PriorityQueue<>(BEST_FIRST);
        /** Pairs whose count rose during the current merge; they get a fresh heap entry. */
        private final Set<Long> risen = new HashSet<>();

        Run(Map<String, long[]> pieceCounts, int bpeVocabTarget) {
            this.bpeVocabTarget = bpeVocabTarget;
            // Sorted only so the internal layout is reproducible when debugging; results do not depend on it.
            List<String> pieces = new ArrayList<>(pieceCounts.keySet());
            pieces.sort(null);
            symbols = new int[pieces.size()][];
            lengths = new int[pieces.size()];
            frequency = new long[pieces.size()];
            visited = new int[pieces.size()];
            for (int p = 0; p < pieces.size(); p++) {
                byte[] bytes = pieces.get(p).getBytes(StandardCharsets.UTF_8);
                int[] ids = new int[bytes.length];
                for (int i = 0; i < bytes.length; i++) {
                    ids[i] = ByteLevelAlphabet.idOf(bytes[i] & 0xFF);
                }
                symbols[p] = ids;
                lengths[p] = ids.length;
                frequency[p] = pieceCounts.get(pieces.get(p))[0];
            }
            for (int id = 0; id < ByteLevelAlphabet.SIZE; id++) {
                addToken(String.valueOf(ByteLevelAlphabet.charOf(ByteLevelAlphabet.byteOf(id))));
            }
        }

        TrainedBpe train(List<String> specialTokens) {
            countAllPairs();
            while (tokens.size() < bpeVocabTarget) {
                Candidate top = heap.poll();
                if (top == null) {
                    break;
                }
                PairStats stats = pairs.get(key(top.left, top.right));
                if (stats.merged) {
                    continue;
                }
                if (top.count != stats.count) {
                    // Stale. A count that rose has its own newer entry; one that fell is re-queued.
                    if (top.count > stats.count && stats.count > 0) {
                        heap.add(new Candidate(stats.count, top.left, top.right));
                    }
                    continue;
                }
                if (stats.count < MIN_PAIR_COUNT) {
                    break;
                }
                merge(top.left, top.right, stats);
            }
            return new TrainedBpe(tokens, merges, specialTokens);
        }

        private int addToken(String token) {
            Integer existing = idOfToken.get(token);
            if (existing != null) {
                return existing;
            }
            int id = tokens.size();
            tokens.add(token);
            idOfToken.put(token, id);
            return id;
        }

        private void countAllPairs() {
            for (int p = 0; p < symbols.length; p++) {
                int[] s = symbols[p];
                for (int i = 0; i + 1 < lengths[p]; i++) {
                    PairStats stats = pairs.computeIfAbsent(key(s[i], s[i + 1]), k -> new PairStats());
                    stats.count += frequency[p];
                    stats.addPiece(p);
                }
            }
            for (Map.Entry<Long, PairStats> e : pairs.entrySet()) {
                long k = e.getKey();
                heap.add(new Candidate(e.getValue().count, (int) (k >>> 32), (int) k));
            }
        }

        private void merge(int left, int right, PairStats stats) {
            int result = addToken(tokens.get(left) + tokens.get(right));
            merges.add(new TrainedBpe.Merge(left, right, result));
            int step = merges.size();
            stats.merged = true;
            stats.count = 0;
            risen.clear();
            for (int i = 0; i < stats.size; i++) {
                int piece = stats.pieces[i];
                if (visited[piece] != step) {
                    visited[piece] = step;
                    mergeInPiece(piece, left, right, result);
                }
            }
            stats.pieces = null;
            for (long k : risen) {
                PairStats s = pairs.get(k);
                if (s.count > 0) {
                    heap.add(new Candidate(s.count, (int) (k >>> 32), (int) k));
                }
            }
        }

        /**
         * Rewrites {@code left right} as {@code result} in one piece, left to right, in place. Each
         * occurrence {@code x left right y} turns pairs (x,left) and (right,y) into (x,result) and
         * (result,y); with back-to-back occurrences the (result,left) added by the first is taken away
         * by the second, leaving (result,result), which is exactly the change.
         */
        private void mergeInPiece(int piece, int left, int right, int result) {
            int[] s = symbols[piece];
            int len = lengths[piece];
            long f = frequency[piece];
            int out = 0;
            int i = 0;
            while (i < len) {
                if (i + 1 < len && s[i] == left && s[i + 1] == right) {
                    if (out > 0) {
                        int before = s[out - 1];
                        change(before, left, -f, piece);
                        change(before, result, f, piece);
                    }
                    if (i + 2 < len) {
                        int after = s[i + 2];
                        change(right, after, -f, piece);
                        change(result, after, f, piece);
                    }
                    s[out++] = result;
                    i += 2;
                } else {
                    s[out++] = s[i++];
                }
            }
            lengths[piece] = out;
        }

        private void change(int left, int right, long delta, int piece) {
            long k = key(left, right);
            PairStats stats = pairs.computeIfAbsent(k, x -> new PairStats());
            if (stats.merged) {
                return; // the pair being merged (or an earlier one): its count is already settled at zero
            }
            stats.count += delta;
            if (delta > 0) {
                stats.addPiece(piece);
                risen.add(k);
            }
        }

        private static long key(int left, int right) {
            return ((long) left << 32) | (right & 0xFFFFFFFFL);
        }
    }
}
