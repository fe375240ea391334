package qlab.engine.tokenizer;

import java.util.Arrays;

/**
 * BPE merge rules keyed by the pair of symbol ids: open addressing with linear probing over a
 * {@code long} key {@code (left << 32) | right}, so the hot merge loop neither boxes nor hashes strings.
 */
final class MergeTable {
    static final int NO_MERGE = Integer.MAX_VALUE;
    private static final long EMPTY = -1L;

    private final long[] keys;
    private final int[] ranks;
    private final int[] merged;
    private final int mask;

    MergeTable(int expectedPairs) {
        int capacity = Integer.highestOneBit(Math.max(4, expectedPairs * 2 - 1)) << 1;
        keys = new long[capacity];
        Arrays.fill(keys, EMPTY);
        ranks = new int[capacity];
        merged = new int[capacity];
        mask = capacity - 1;
    }

    private static long key(int left, int right) {
        return ((long) left << 32) | (right & 0xFFFFFFFFL);
    }

    private static int slotHash(long key) {
        long h = key * 0x9E3779B97F4A7C15L;
        return (int) (h ^ (h >>> 29));
    }

    /** Adds or replaces a rule (a later duplicate wins, as when the reference collects its map). */
    void put(int left, int right, int rank, int mergedId) {
        long k = key(left, right);
        int slot = slotHash(k) & mask;
        while (keys[slot] != EMPTY && keys[slot] != k) {
            slot = (slot + 1) & mask;
        }
        keys[slot] = k;
        ranks[slot] = rank;
        merged[slot] = mergedId;
    }

    /** Slot of the pair, or -1 when the pair has no merge rule. */
    int find(int left, int right) {
        long k = key(left, right);
        int slot = slotHash(k) & mask;
        while (true) {
            long s = keys[slot];
            if (s == k) {
                return slot;
            }
            if (s == EMPTY) {
                return -1;
            }
            slot = (slot + 1) & mask;
        }
    }

    int rank(int left, int right) {
        int slot = find(left, right);
        return slot < 0 ? NO_MERGE : ranks[slot];
    }

    int rankAt(int slot) {
        return ranks[slot];
    }

    int mergedAt(int slot) {
        return merged[slot];
    }
}
