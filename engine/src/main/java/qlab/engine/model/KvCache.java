package qlab.engine.model;

import qlab.engine.QlabException;

/**
 * The keys and values of one sequence, pre-allocated for {@code capacity} positions. Positions
 * continue across forward calls: the next token is written at {@link #length()}.
 *
 * <p>Keys (post-RoPE) and values are stored as their {@link KvType}s say: f32 as float arrays read
 * in place, any other type as one encoded row of {@code headDim} values per position and KV head,
 * decoded a tile of positions at a time by attention.
 */
public final class KvCache {

    private final KvTypes types;
    private final int capacity;
    private final int kvDim;
    private final int kvHeads;
    private final int headDim;
    private final long keyRowBytes;   // one head's encoded row (encoded types only)
    private final long valueRowBytes;
    final float[][] keys;     // f32 keys: [layer][capacity * kvDim], else null
    final float[][] values;   // f32 values: [layer][capacity * kvDim], else null
    final byte[][] keyBytes;  // encoded keys: [layer][capacity * kvHeads * keyRowBytes], else null
    final byte[][] valueBytes;
    private int length;

    public KvCache(ModelConfig c, int capacity) {
        this(c, capacity, KvTypes.F32);
    }

    public KvCache(ModelConfig c, int capacity, KvTypes types) {
        if (capacity < 1) {
            throw new QlabException("KV cache capacity must be at least 1, got " + capacity);
        }
        this.types = types;
        this.capacity = capacity;
        this.kvDim = c.kvDim();
        this.kvHeads = c.numKvHeads();
        this.headDim = c.headDim();
        for (KvType t : new KvType[] {types.keys(), types.values()}) {
            if (headDim % t.blockSize() != 0) {
                throw new QlabException("KV cache type " + t.name() + " stores blocks of " + t.blockSize()
                        + " values; this model's head_dim " + headDim + " is not a multiple of it");
            }
        }
        int layers = c.numLayers();
        this.keyRowBytes = types.keys().bytesPerRow(headDim);
        this.valueRowBytes = types.values().bytesPerRow(headDim);
        this.keys = types.keys() == KvType.F32 ? new float[layers][Math.multiplyExact(capacity, kvDim)] : null;
        this.values = types.values() == KvType.F32 ? new float[layers][Math.multiplyExact(capacity, kvDim)] : null;
        this.keyBytes = keys == null ? new byte[layers][bytes(capacity, keyRowBytes)] : null;
        this.valueBytes = values == null ? new byte[layers][bytes(capacity, valueRowBytes)] : null;
    }

    private int bytes(int capacity, long rowBytes) {
        long n = (long) capacity * kvHeads * rowBytes;
        if (n > Integer.MAX_VALUE - 8) {
            throw new QlabException("a KV cache of " + capacity + " positions needs " + n
                    + " bytes per layer, more than one array holds; use a shorter context");
        }
        return (int) n;
    }

    public KvTypes types() {
        return types;
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

    /** Bytes held for all {@link #capacity()} positions, keys and values of every layer. */
    public long byteSize() {
        long perLayer = keys != null ? 4L * keys[0].length : keyBytes[0].length;
        perLayer += values != null ? 4L * values[0].length : valueBytes[0].length;
        int layers = keys != null ? keys.length : keyBytes.length;
        return perLayer * layers;
    }

    /** Stores one position's keys k[kOff .. kOff + kvDim) and values v[vOff ..] in a layer. */
    void store(int layer, int pos, float[] k, int kOff, float[] v, int vOff) {
        if (keys != null) {
            System.arraycopy(k, kOff, keys[layer], pos * kvDim, kvDim);
        } else {
            for (int h = 0; h < kvHeads; h++) {
                types.keys().encode(k, kOff + h * headDim, headDim, keyBytes[layer], rowOffset(pos, h, keyRowBytes));
            }
        }
        if (values != null) {
            System.arraycopy(v, vOff, values[layer], pos * kvDim, kvDim);
        } else {
            for (int h = 0; h < kvHeads; h++) {
                types.values().encode(v, vOff + h * headDim, headDim, valueBytes[layer], rowOffset(pos, h, valueRowBytes));
            }
        }
    }

    /** Positions of one KV head in one layer as attention reads them: position p's row at data[offset + (p - from) * stride]. */
    record Tile(float[] data, int offset, int stride) {}

    /** KV head h's keys at positions [from, to): in place for f32, else decoded into scratch (rows of headDim). */
    Tile keys(int layer, int h, int from, int to, float[] scratch) {
        return tile(keys, keyBytes, types.keys(), keyRowBytes, layer, h, from, to, scratch);
    }

    /** As {@link #keys} for values. */
    Tile values(int layer, int h, int from, int to, float[] scratch) {
        return tile(values, valueBytes, types.values(), valueRowBytes, layer, h, from, to, scratch);
    }

    private Tile tile(float[][] f32, byte[][] encoded, KvType type, long rowBytes, int layer, int h, int from, int to,
                      float[] scratch) {
        if (f32 != null) {
            return new Tile(f32[layer], from * kvDim + h * headDim, kvDim);
        }
        for (int p = from; p < to; p++) {
            type.decode(encoded[layer], rowOffset(p, h, rowBytes), headDim, scratch, (p - from) * headDim);
        }
        return new Tile(scratch, 0, headDim);
    }

    private long rowOffset(int pos, int h, long rowBytes) {
        return ((long) pos * kvHeads + h) * rowBytes;
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
