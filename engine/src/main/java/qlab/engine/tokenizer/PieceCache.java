package qlab.engine.tokenizer;

/**
 * Bounded, lock-free cache from a pre-token's characters to its token ids. Direct mapped: each key
 * hashes to one slot and a new entry simply replaces the old one, so memory stays fixed. Entries are
 * immutable objects whose fields are final, so a racing reader sees either a whole entry or an
 * older one (a miss), never a half-built one; no locks are needed.
 */
final class PieceCache {
    /** Longer pieces are rare and cheap to recompute relative to their length; they are not cached. */
    static final int MAX_KEY_CHARS = 64;

    private record Entry(int hash, char[] key, int[] ids) {
    }

    private final Entry[] slots;
    private final int mask;

    PieceCache(int capacityPowerOfTwo) {
        if (Integer.bitCount(capacityPowerOfTwo) != 1) {
            throw new IllegalArgumentException("capacity must be a power of two: " + capacityPowerOfTwo);
        }
        slots = new Entry[capacityPowerOfTwo];
        mask = capacityPowerOfTwo - 1;
    }

    static int hash(String text, int start, int end) {
        int h = 0x811C9DC5;
        for (int i = start; i < end; i++) {
            h = (h ^ text.charAt(i)) * 0x01000193;
        }
        return h ^ (h >>> 15);
    }

    /** The cached ids of {@code text[start, end)} with precomputed {@code hash}, or null. */
    int[] get(String text, int start, int end, int hash) {
        Entry e = slots[hash & mask];
        if (e == null || e.hash != hash || e.key.length != end - start) {
            return null;
        }
        char[] key = e.key;
        for (int i = 0; i < key.length; i++) {
            if (key[i] != text.charAt(start + i)) {
                return null;
            }
        }
        return e.ids;
    }

    void put(String text, int start, int end, int hash, int[] ids) {
        char[] key = new char[end - start];
        text.getChars(start, end, key, 0);
        slots[hash & mask] = new Entry(hash, key, ids);
    }
}
