package qlab.serve;

import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import qlab.engine.model.KvCache;

/**
 * Computed prompt KV kept for reuse, in blocks of {@link #BLOCK_TOKENS} positions, keyed by the
 * token prefix as a chain: a block's key is its parent block's id and its own tokens, so a block
 * matches only behind the very prefix it was computed after. Evicted least-recently-used under a
 * byte budget. Besides whole blocks, an entry per finished prompt holds its partial last block and
 * the logits of its last position, so a repeated prompt needs no forward pass at all.
 *
 * <p>Blocks are copied into and out of each sequence's own {@link qlab.engine.model.KvCache}
 * (the engine's attention reads one contiguous cache per sequence); a copy costs far less than
 * recomputing a position. Used by the scheduler's thread only.
 */
final class PrefixCache {

    /**
     * Positions per block. A prompt's prefill runs in forward passes of whole blocks (a partial last
     * block alone), so a prefill resumed at a block boundary behind a cache hit runs the same passes
     * as a cold one. The kernels take another path (another rounding) below a batch of 32 rows
     * (f32; 8 for the quantized formats), and a pass of whole blocks must stay above that whatever
     * it starts at: 32 is the smallest block for which a hit leaves the output bit for bit unchanged.
     */
    static final int BLOCK_TOKENS = 32;

    /**
     * A whole block (its parent block's id, 0 for none, and its tokens), or a prompt's end (the id
     * of its last whole block and the fewer than a block of tokens after it).
     */
    private record Key(long parent, int[] tokens, boolean end) {
        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && k.parent == parent && k.end == end && Arrays.equals(k.tokens, tokens);
        }

        @Override
        public int hashCode() {
            return Objects.hash(parent, end, Arrays.hashCode(tokens));
        }
    }

    /** A stored block or prompt end: its id (for children's keys), KV, and for an end the last logits. */
    record Entry(long id, KvCache.Positions kv, float[] logits) {
        int positions() {
            return kv.count();
        }

        long bytes() {
            return kv.byteSize() + (logits == null ? 0 : 4L * logits.length) + 64;
        }
    }

    /** What a prompt finds: the blocks to copy in order, then possibly its end. */
    record Hit(Entry[] blocks, Entry end) {
        int tokens() {
            int n = blocks.length * BLOCK_TOKENS;
            return end == null ? n : n + end.positions();
        }
    }

    private final long budgetBytes;
    private final LinkedHashMap<Key, Entry> entries = new LinkedHashMap<>(256, 0.75f, true);
    private long bytes;
    private long nextId = 1;

    PrefixCache(long budgetBytes) {
        this.budgetBytes = budgetBytes;
    }

    long bytes() {
        return bytes;
    }

    int entries() {
        return entries.size();
    }

    /**
     * The longest cached prefix of {@code prompt}. A prompt ending exactly at a cached end comes
     * back whole with its last logits; otherwise at least its last token is left to compute (its
     * logits are needed), so the hit stops at the last block boundary before the end.
     */
    Hit lookup(int[] prompt) {
        if (budgetBytes == 0) {
            return new Hit(new Entry[0], null);
        }
        int whole = prompt.length / BLOCK_TOKENS;
        Entry[] found = new Entry[whole];
        long parent = 0;
        int m = 0;
        while (m < whole) {
            Entry e = entries.get(new Key(parent, block(prompt, m), false));
            if (e == null) {
                break;
            }
            found[m++] = e;
            parent = e.id;
        }
        Entry end = null;
        if (m == whole) {
            end = entries.get(new Key(parent, Arrays.copyOfRange(prompt, whole * BLOCK_TOKENS, prompt.length), true));
        }
        if (end == null && m * BLOCK_TOKENS == prompt.length && m > 0) {
            m--; // the last position must be computed for its logits: the last block runs again
        }
        // Touch from the last block back to the first, so a parent is never older than its child and
        // eviction takes the ends of chains first.
        for (int i = m - 1; i >= 0; i--) {
            entries.get(keyOf(prompt, i, i == 0 ? 0 : found[i - 1].id));
        }
        return new Hit(Arrays.copyOf(found, m), end);
    }

    /**
     * Stores what a finished prefill computed: every whole block from {@code fromBlock} on, read
     * out of {@code kv}, and the prompt's end with its last logits.
     */
    void store(int[] prompt, KvCache kv, float[] lastLogits) {
        if (budgetBytes == 0) {
            return;
        }
        int whole = prompt.length / BLOCK_TOKENS;
        long parent = 0;
        for (int b = 0; b < whole; b++) {
            Key key = new Key(parent, block(prompt, b), false);
            Entry e = entries.get(key);
            if (e == null) {
                e = new Entry(nextId++, kv.copyOut(b * BLOCK_TOKENS, BLOCK_TOKENS), null);
                put(key, e);
            }
            parent = e.id;
        }
        int tail = prompt.length - whole * BLOCK_TOKENS;
        Key end = new Key(parent, Arrays.copyOfRange(prompt, whole * BLOCK_TOKENS, prompt.length), true);
        if (!entries.containsKey(end)) {
            put(end, new Entry(nextId++, kv.copyOut(whole * BLOCK_TOKENS, tail), lastLogits.clone()));
        }
        // Re-touch the chain back to front (see lookup).
        lookup(prompt);
    }

    private void put(Key key, Entry e) {
        if (e.bytes() > budgetBytes) {
            return;
        }
        entries.put(key, e);
        bytes += e.bytes();
        Iterator<Map.Entry<Key, Entry>> it = entries.entrySet().iterator();
        while (bytes > budgetBytes && it.hasNext()) {
            Map.Entry<Key, Entry> oldest = it.next();
            if (oldest.getValue() == e) {
                continue;
            }
            bytes -= oldest.getValue().bytes();
            it.remove();
        }
    }

    private static Key keyOf(int[] prompt, int block, long parent) {
        return new Key(parent, block(prompt, block), false);
    }

    private static int[] block(int[] prompt, int b) {
        return Arrays.copyOfRange(prompt, b * BLOCK_TOKENS, (b + 1) * BLOCK_TOKENS);
    }
}
