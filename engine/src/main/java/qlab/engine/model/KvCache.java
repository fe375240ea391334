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

    /** Floats that {@link #copyOut} writes for {@code count} positions: keys and values of every layer. */
    public int floatsFor(int count) {
        return Math.multiplyExact(2 * keys.length, Math.multiplyExact(count, kvDim));
    }

    /**
     * Copies positions [from, from + count) of every layer into a flat array laid out
     * [layer][keys, values][count * kvDim], so a server can keep a computed prefix and restore it.
     */
    public float[] copyOut(int from, int count) {
        if (from < 0 || count < 0 || from + count > length) {
            throw new IllegalArgumentException("copy positions [" + from + ", " + (from + count) + ") of " + length);
        }
        float[] out = new float[floatsFor(count)];
        int span = count * kvDim;
        for (int l = 0; l < keys.length; l++) {
            System.arraycopy(keys[l], from * kvDim, out, 2 * l * span, span);
            System.arraycopy(values[l], from * kvDim, out, (2 * l + 1) * span, span);
        }
        return out;
    }

    /** Appends {@code count} positions written by {@link #copyOut} of a cache of the same model, and advances. */
    public void append(float[] data, int count) {
        if (data.length != floatsFor(count)) {
            throw new IllegalArgumentException(data.length + " floats for " + count + " positions");
        }
        if (length + count > capacity) {
            throw new QlabException("context is full: " + count + " positions do not fit after " + length + " of " + capacity);
        }
        int span = count * kvDim;
        for (int l = 0; l < keys.length; l++) {
            System.arraycopy(data, 2 * l * span, keys[l], length * kvDim, span);
            System.arraycopy(data, (2 * l + 1) * span, values[l], length * kvDim, span);
        }
        length += count;
    }
}
