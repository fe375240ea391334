package qlab.engine.tokenizer;

import java.util.Arrays;

/**
 * Applies BPE merges to one word (a sequence of symbol ids): repeatedly merge the adjacent pair with
 * the lowest rank, the leftmost one among equals, until no pair has a rule. Two implementations of
 * the same rule: a plain scan (the reference, and fastest for the short words that dominate text)
 * and a heap over a linked list for long words (runs of thousands of repeated characters), where
 * the scan would be quadratic.
 */
final class BpeMerger {
    /** Words longer than this use the heap; measured on mixed text, short words dominate. */
    static final int SCAN_LIMIT = 48;

    private final MergeTable merges;

    BpeMerger(MergeTable merges) {
        this.merges = merges;
    }

    /** Merges {@code symbols[0, length)} in place; returns the new length. */
    int merge(int[] symbols, int length) {
        return length <= SCAN_LIMIT ? mergeByScan(symbols, length) : mergeWithHeap(symbols, length);
    }

    /** Reference: find the lowest-rank pair (leftmost on ties), merge it, repeat. */
    int mergeByScan(int[] symbols, int length) {
        if (length < 2) {
            return length;
        }
        int[] pairRank = new int[length - 1];
        int[] pairMerged = new int[length - 1];
        for (int i = 0; i + 1 < length; i++) {
            setPair(symbols, pairRank, pairMerged, i);
        }
        int n = length;
        while (n > 1) {
            int best = -1;
            int bestRank = MergeTable.NO_MERGE;
            for (int i = 0; i + 1 < n; i++) {
                if (pairRank[i] < bestRank) {
                    bestRank = pairRank[i];
                    best = i;
                }
            }
            if (best < 0) {
                break;
            }
            symbols[best] = pairMerged[best];
            // Drop symbol best+1 and pair best+1 (the pair arrays have n-1 entries).
            System.arraycopy(symbols, best + 2, symbols, best + 1, n - best - 2);
            int pairsAfter = n - best - 3;
            if (pairsAfter > 0) {
                System.arraycopy(pairRank, best + 2, pairRank, best + 1, pairsAfter);
                System.arraycopy(pairMerged, best + 2, pairMerged, best + 1, pairsAfter);
            }
            n--;
            if (best > 0) {
                setPair(symbols, pairRank, pairMerged, best - 1);
            }
            if (best + 1 < n) {
                setPair(symbols, pairRank, pairMerged, best);
            }
        }
        return n;
    }

    private void setPair(int[] symbols, int[] pairRank, int[] pairMerged, int i) {
        int slot = merges.find(symbols[i], symbols[i + 1]);
        if (slot < 0) {
            pairRank[i] = MergeTable.NO_MERGE;
        } else {
            pairRank[i] = merges.rankAt(slot);
            pairMerged[i] = merges.mergedAt(slot);
        }
    }

    /**
     * Same rule with a min-heap of (rank, position) over a doubly linked list of symbols. Entries
     * made stale by an earlier merge are recognised because the pair now at their position has a
     * different rank (each rank belongs to exactly one pair).
     */
    int mergeWithHeap(int[] symbols, int length) {
        if (length < 2) {
            return length;
        }
        int[] next = new int[length];
        int[] prev = new int[length];
        boolean[] removed = new boolean[length];
        for (int i = 0; i < length; i++) {
            next[i] = i + 1 < length ? i + 1 : -1;
            prev[i] = i - 1;
        }
        LongHeap heap = new LongHeap(length);
        for (int i = 0; i + 1 < length; i++) {
            pushPair(heap, symbols, i, i + 1);
        }
        while (!heap.isEmpty()) {
            long top = heap.poll();
            int rank = (int) (top >>> 32);
            int pos = (int) top;
            int right = next[pos];
            if (removed[pos] || right < 0) {
                continue;
            }
            int slot = merges.find(symbols[pos], symbols[right]);
            if (slot < 0 || merges.rankAt(slot) != rank) {
                continue;
            }
            symbols[pos] = merges.mergedAt(slot);
            removed[right] = true;
            int after = next[right];
            next[pos] = after;
            if (after >= 0) {
                prev[after] = pos;
                pushPair(heap, symbols, pos, after);
            }
            if (prev[pos] >= 0) {
                pushPair(heap, symbols, prev[pos], pos);
            }
        }
        int n = 0;
        for (int i = 0; i >= 0; i = next[i]) {
            symbols[n++] = symbols[i];
        }
        return n;
    }

    private void pushPair(LongHeap heap, int[] symbols, int left, int right) {
        int rank = merges.rank(symbols[left], symbols[right]);
        if (rank != MergeTable.NO_MERGE) {
            heap.add(((long) rank << 32) | left);
        }
    }

    /** A binary min-heap of longs (rank in the high half, position in the low half). */
    private static final class LongHeap {
        private long[] items;
        private int size;

        LongHeap(int capacity) {
            items = new long[Math.max(4, capacity)];
        }

        boolean isEmpty() {
            return size == 0;
        }

        void add(long v) {
            if (size == items.length) {
                items = Arrays.copyOf(items, size * 2);
            }
            int i = size++;
            while (i > 0) {
                int parent = (i - 1) >>> 1;
                if (items[parent] <= v) {
                    break;
                }
                items[i] = items[parent];
                i = parent;
            }
            items[i] = v;
        }

        long poll() {
            long top = items[0];
            long last = items[--size];
            int i = 0;
            while (true) {
                int child = 2 * i + 1;
                if (child >= size) {
                    break;
                }
                if (child + 1 < size && items[child + 1] < items[child]) {
                    child++;
                }
                if (items[child] >= last) {
                    break;
                }
                items[i] = items[child];
                i = child;
            }
            if (size > 0) {
                items[i] = last;
            }
            return top;
        }
    }
}
