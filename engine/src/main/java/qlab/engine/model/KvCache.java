package qlab.engine.model;

import qlab.engine.QlabException;

/**
 * The keys and values of one sequence, pre-allocated for {@code capacity} positions. Positions
 * continue across forward calls: the next token is written at {@link #length()}.
 */
public final class KvCache {

    final float[][] keys;   // [layer][capacity * kvDim], RoPE already applied
    final float[][] values; // [layer][capacity * kvDim]
    private final int capacity;
    private final int kvDim;
    private int length;

    public KvCache(ModelConfig c, int capacity) {
        if (capacity < 1) {
            throw new QlabException("KV cache capacity must be at least 1, got " + capacity);
        }
        this.capacity = capacity;
        this.kvDim = c.kvDim();
        this.keys = new float[c.numLayers()][Math.multiplyExact(capacity, kvDim)];
        this.values = new float[c.numLayers()][Math.multiplyExact(capacity, kvDim)];
    }

    /** Positions filled so far; the next token goes at this position. */
    public int length() {
        return length;
    }

    public int capacity() {
        return capacity;
    }

    int kvDim() {
        return kvDim;
    }

    /** Forgets everything (the arrays are reused). */
    public void clear() {
        length = 0;
    }

    /** Drops positions at and after {@code newLength} (e.g. to re-run a shorter prefix). */
    public void truncate(int newLength) {
        if (newLength < 0 || newLength > length) {
            throw new IllegalArgumentException("truncate to " + newLength + " with length " + length);
        }
        length = newLength;
    }

    public void advance(int n) {
        length += n;
    }

    public long byteSize() {
        return 8L * keys.length * keys[0].length;
    }
}
