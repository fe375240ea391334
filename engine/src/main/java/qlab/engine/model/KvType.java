package qlab.engine.model;

/**
 * How the KV cache stores keys or values: f32 as they are, or encoded in blocks (f16, bf16,
 * q8_0, q4_0, ... as llama.cpp's {@code -ctk}/{@code -ctv} do). The cache encodes one head's row
 * of {@code headDim} values per position and decodes the rows of a whole attention tile at once.
 * Implementations beyond {@link #F32} come from the quant module's formats.
 */
public interface KvType {

    /** f32: no encoding; the cache keeps float arrays and attention reads them in place. */
    KvType F32 = new KvType() {
        @Override public String name() { return "f32"; }
        @Override public int blockSize() { return 1; }
        @Override public long bytesPerRow(int values) { return 4L * values; }
        @Override public void encode(float[] src, int srcOff, int n, byte[] dst, long dstOff) {
            throw new UnsupportedOperationException("f32 rows are stored as floats");
        }
        @Override public void decode(byte[] src, long srcOff, int n, float[] dst, int dstOff) {
            throw new UnsupportedOperationException("f32 rows are stored as floats");
        }
        @Override public String toString() { return "f32"; }
    };

    /** The name users type: f32, f16, q8_0, ... */
    String name();

    /** Values that share one stored scale; a head's row must be a multiple of it. */
    int blockSize();

    /** Bytes that encode {@code values} values (a multiple of {@link #blockSize()}). */
    long bytesPerRow(int values);

    /** Encodes src[srcOff .. srcOff + n) into {@link #bytesPerRow}(n) bytes at dst[dstOff]. */
    void encode(float[] src, int srcOff, int n, byte[] dst, long dstOff);

    /** Decodes {@code n} values stored at src[srcOff] into dst[dstOff ..]. */
    void decode(byte[] src, long srcOff, int n, float[] dst, int dstOff);

    /**
     * Rounds one head's query as the dot product with keys of this type takes it. ggml's CPU
     * attention converts the query to the key type's dot-product type first (f16 for f16 keys,
     * bf16 for bf16, q8_0 blocks for the block types), and that rounding is part of what a cache
     * type costs in llama.cpp; f32 keys take the query as it is.
     */
    default void roundQuery(float[] q, int off, int n) {
    }

    /** The values a row has after a trip through the cache (the float64 reference rounds K and V with it). */
    default void round(float[] row, int off, int n) {
        if (this == F32) {
            return;
        }
        byte[] b = new byte[Math.toIntExact(bytesPerRow(n))];
        encode(row, off, n, b, 0);
        decode(b, 0, n, row, off);
    }
}
