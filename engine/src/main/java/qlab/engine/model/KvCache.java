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

    /**
     * Some positions' keys and values of every layer, as the cache stores them (f32 or encoded),
     * to put behind the same prefix in another cache of the same model and types: a server keeps
     * a computed prefix so and restores it.
     */
    public record Positions(int count, KvTypes types, float[][] keys, float[][] values, byte[][] keyBytes,
                            byte[][] valueBytes) {
        /** Bytes of the copy. */
        public long byteSize() {
            long n = 0;
            for (Object[] part : new Object[][] {keys, values, keyBytes, valueBytes}) {
                if (part != null) {
                    for (Object a : part) {
                        n += a instanceof float[] f ? 4L * f.length : ((byte[]) a).length;
                    }
                }
            }
            return n;
        }
    }

    /** A copy of positions [from, from + count). */
    public Positions copyOut(int from, int count) {
        if (from < 0 || count < 0 || from + count > length) {
            throw new IllegalArgumentException("copy positions [" + from + ", " + (from + count) + ") of " + length);
        }
        int layers = keys != null ? keys.length : keyBytes.length;
        float[][] k = keys == null ? null : new float[layers][];
        float[][] v = values == null ? null : new float[layers][];
        byte[][] kb = keys == null ? new byte[layers][] : null;
        byte[][] vb = values == null ? new byte[layers][] : null;
        for (int l = 0; l < layers; l++) {
            if (k != null) {
                k[l] = java.util.Arrays.copyOfRange(keys[l], from * kvDim, (from + count) * kvDim);
            } else {
                kb[l] = java.util.Arrays.copyOfRange(keyBytes[l], (int) rowOffset(from, 0, keyRowBytes),
                        (int) rowOffset(from + count, 0, keyRowBytes));
            }
            if (v != null) {
                v[l] = java.util.Arrays.copyOfRange(values[l], from * kvDim, (from + count) * kvDim);
            } else {
                vb[l] = java.util.Arrays.copyOfRange(valueBytes[l], (int) rowOffset(from, 0, valueRowBytes),
                        (int) rowOffset(from + count, 0, valueRowBytes));
            }
        }
        return new Positions(count, types, k, v, kb, vb);
    }

    /** Appends positions copied out of a cache of the same model and types, and advances. */
    public void append(Positions p) {
        if (!p.types().equals(types)) {
            throw new IllegalArgumentException("positions of a " + p.types() + " cache appended to a " + types + " one");
        }
        if (length + p.count() > capacity) {
            throw new QlabException("context is full: " + p.count() + " positions do not fit after " + length + " of "
                    + capacity);
        }
        int layers = keys != null ? keys.length : keyBytes.length;
        for (int l = 0; l < layers; l++) {
            if (keys != null) {
                System.arraycopy(p.keys()[l], 0, keys[l], length * kvDim, p.keys()[l].length);
            } else {
                System.arraycopy(p.keyBytes()[l], 0, keyBytes[l], (int) rowOffset(length, 0, keyRowBytes),
                        p.keyBytes()[l].length);
            }
            if (values != null) {
                System.arraycopy(p.values()[l], 0, values[l], length * kvDim, p.values()[l].length);
            } else {
                System.arraycopy(p.valueBytes()[l], 0, valueBytes[l], (int) rowOffset(length, 0, valueRowBytes),
                        p.valueBytes()[l].length);
            }
        }
        length += p.count();
    }
}
