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

    /** A whole block: parent block id (0 = none) and its tokens. */
    private record BlockKey(long parent, int[] tokens) {
        @Override
        public boolean equals(Object o) {
            return o instanceof BlockKey k && k.parent == parent && Arrays.equals(k.tokens, tokens);
        }

        @Override
        public int hashCode() {
            return Objects.hash(parent, Arrays.hashCode(tokens));
        }
    }

    /** A prompt's end: the id of its last whole block (0 = none) and the tokens after it (fewer than a block). */
    private record EndKey(long parent, int[] tail) {
        @Override
        public boolean equals(Object o) {
            return o instanceof EndKey k && k.parent == parent && Arrays.equals(k.tail, tail);
        }

        @Override
        public int hashCode() {
            return 31 * Objects.hash(parent, Arrays.hashCode(tail)) + 7;
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
    private final LinkedHashMap<Object, Entry> entries = new LinkedHashMap<>(256, 0.75f, true);
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
            Entry e = entries.get(new BlockKey(parent, block(prompt, m)));
            if (e == null) {
                break;
            }
            found[m++] = e;
            parent = e.id;
        }
        Entry end = null;
        if (m == whole) {
            end = entries.get(new EndKey(parent, Arrays.copyOfRange(prompt, whole * BLOCK_TOKENS, prompt.length)));
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
            BlockKey key = new BlockKey(parent, block(prompt, b));
            Entry e = entries.get(key);
            if (e == null) {
                e = new Entry(nextId++, kv.copyOut(b * BLOCK_TOKENS, BLOCK_TOKENS), null);
                put(key, e);
            }
            parent = e.id;
        }
        int tail = prompt.length - whole * BLOCK_TOKENS;
        EndKey end = new EndKey(parent, Arrays.copyOfRange(prompt, whole * BLOCK_TOKENS, prompt.length));
        if (!entries.containsKey(end)) {
            put(end, new Entry(nextId++, kv.copyOut(whole * BLOCK_TOKENS, tail), lastLogits.clone()));
        }
        // Re-touch the chain back to front (see lookup).
        lookup(prompt);
    }

    private void put(Object key, Entry e) {
        if (e.bytes() > budgetBytes) {
            return;
        }
        entries.put(key, e);
        bytes += e.bytes();
        Iterator<Map.Entry<Object, Entry>> it = entries.entrySet().iterator();
        while (bytes > budgetBytes && it.hasNext()) {
            Map.Entry<Object, Entry> oldest = it.next();
            if (oldest.getValue() == e) {
                continue;
            }
            bytes -= oldest.getValue().bytes();
            it.remove();
        }
    }

    private static Object keyOf(int[] prompt, int block, long parent) {
        return new BlockKey(parent, block(prompt, block));
    }

    private static int[] block(int[] prompt, int b) {
        return Arrays.copyOfRange(prompt, b * BLOCK_TOKENS, (b + 1) * BLOCK_TOKENS);
    }
}
