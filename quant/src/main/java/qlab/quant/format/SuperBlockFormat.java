package qlab.quant.format;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Optional;
import qlab.quant.PackedWeights;
import qlab.quant.QuantFormat;
import qlab.quant.ggml.GgmlCodec;
import qlab.quant.ggml.GgmlType;
import qlab.quant.kernel.SubBlockWeights;

/**
 * A format stored exactly as one of ggml's block types (the k-quants, IQ4_NL, IQ4_XS): a row is
 * its blocks back to back, each the bytes llama.cpp writes for the same floats, so the
 * {@link GgmlCodec} is a plain copy. A row whose width is not a multiple of the block is padded
 * with zeros to the next multiple (importance 0 there) and the padding is stored; GGUF files hold
 * such a row only when its width is a multiple of the block, which {@link GgmlCodec} enforces.
 *
 * <p>Every block decodes, 16 values at a time, into an effective f32 scale, an f32 min and small
 * integer levels, with value = scale × level − min in f32: for every type this is bitwise the
 * value ggml's {@code to_float} computes (its products are the same two f32 roundings and a
 * min of 0 subtracts exactly). {@link #pack} hands that decomposition to {@link SubBlockWeights}.
 */
public abstract class SuperBlockFormat implements QuantFormat {
    /** Values per decoded scale (the finest sub-block any of these types has). */
    public static final int SUB = 16;

    private final String name;
    private final GgmlType type;

    SuperBlockFormat(String name, GgmlType type) {
        this.name = name;
        this.type = type;
    }

    @Override
    public final String name() {
        return name;
    }

    /** The block: 256 values (the k-quants, IQ4_XS) or 32 (IQ4_NL). */
    @Override
    public final int groupSize() {
        return type.blockSize;
    }

    @Override
    public final String label() {
        return name;
    }

    /** The ggml type whose blocks these rows are. */
    public final GgmlType type() {
        return type;
    }

    private int blocks(int cols) {
        return (cols + type.blockSize - 1) / type.blockSize;
    }

    @Override
    public final long bytesPerRow(int cols) {
        return (long) blocks(cols) * type.typeSize;
    }

    @Override
    public final boolean isInteger() {
        return true;
    }

    /** Whether the type stores a min per sub-block (q2_k, q4_k, q5_k); the others decode mins of 0. */
    public abstract boolean hasMins();

    /**
     * Quantizes one block: x[xOff .. xOff + block), importance weights qw[qwOff ..] or null for
     * ggml's plain quantizer, into out[0 .. typeSize).
     */
    abstract void quantizeBlock(float[] x, int xOff, float[] qw, int qwOff, byte[] out);

    /**
     * Decodes one block: for sub-block s of 16 values, scales[sOff + s] and mins[sOff + s], and each
     * value's level into levels[lOff ..], so that value = scales × level − mins in f32.
     */
    abstract void decodeBlock(byte[] in, float[] scales, float[] mins, int sOff, byte[] levels, int lOff);

    @Override
    public final void quantizeRow(float[] src, int srcOffset, int cols, float[] importance, MemorySegment dst, long dstOffset) {
        if (importance != null && importance.length < cols) {
            throw new IllegalArgumentException("importance has " + importance.length + " weights for " + cols + " columns");
        }
        int block = type.blockSize;
        int padded = blocks(cols) * block;
        float[] x = src;
        int xOff = srcOffset;
        float[] qw = importance;
        if (padded != cols) {
            x = new float[padded];
            System.arraycopy(src, srcOffset, x, 0, cols);
            xOff = 0;
            if (importance != null) {
                qw = new float[padded];
                System.arraycopy(importance, 0, qw, 0, cols);
            }
        }
        byte[] out = new byte[type.typeSize];
        for (int b = 0; b < padded / block; b++) {
            java.util.Arrays.fill(out, (byte) 0);
            quantizeBlock(x, xOff + b * block, qw, b * block, out);
            MemorySegment.copy(out, 0, dst, ValueLayout.JAVA_BYTE, dstOffset + (long) b * type.typeSize, out.length);
        }
    }

    /**
     * The decomposition of one stored row: scales and mins per 16 values at [sOff ..), levels at
     * [lOff ..), the row padded to its blocks.
     */
    public final void decodeRow(MemorySegment src, long srcOffset, int cols, float[] scales, float[] mins, int sOff,
                                byte[] levels, int lOff) {
        int block = type.blockSize;
        byte[] in = new byte[type.typeSize];
        for (int b = 0; b < blocks(cols); b++) {
            MemorySegment.copy(src, ValueLayout.JAVA_BYTE, srcOffset + (long) b * type.typeSize, in, 0, in.length);
            decodeBlock(in, scales, mins, sOff + b * block / SUB, levels, lOff + b * block);
        }
    }

    @Override
    public final void dequantizeRow(MemorySegment src, long srcOffset, int cols, float[] dst, int dstOffset) {
        int padded = blocks(cols) * type.blockSize;
        float[] scales = new float[padded / SUB];
        float[] mins = new float[padded / SUB];
        byte[] levels = new byte[padded];
        decodeRow(src, srcOffset, cols, scales, mins, 0, levels, 0);
        for (int j = 0; j < cols; j++) {
            dst[dstOffset + j] = scales[j / SUB] * levels[j] - mins[j / SUB];
        }
    }

    @Override
    public PackedWeights pack(MemorySegment data, int rows, int cols) {
        int padded = blocks(cols) * type.blockSize;
        long rowBytes = bytesPerRow(cols);
        float[] scales = new float[rows * (padded / SUB)];
        float[] mins = new float[rows * (padded / SUB)];
        byte[] levels = new byte[Math.multiplyExact(rows, padded)];
        for (int r = 0; r < rows; r++) {
            decodeRow(data, r * rowBytes, cols, scales, mins, r * (padded / SUB), levels, r * padded);
        }
        return SubBlockWeights.copied(rows, cols, padded, levels, scales, hasMins() ? mins : null);
    }

    /** Whether {@link #pack} makes its own copy of the levels (true), or reads the stored rows in place. */
    public boolean packsCopy() {
        return true;
    }

    @Override
    public final Optional<GgmlCodec> ggml() {
        GgmlType t = type;
        return Optional.of(new GgmlCodec() {
            @Override
            public GgmlType type() {
                return t;
            }

            @Override
            public void toGgml(MemorySegment src, long srcOffset, int cols, MemorySegment dst, long dstOffset) {
                MemorySegment.copy(src, srcOffset, dst, dstOffset, t.rowBytes(cols));
            }

            @Override
            public void fromGgml(MemorySegment src, long srcOffset, int cols, MemorySegment dst, long dstOffset) {
                MemorySegment.copy(src, srcOffset, dst, dstOffset, t.rowBytes(cols));
            }
        });
    }

    @Override
    public String toString() {
        return label();
    }

    // ---------------------------------------------------------------- block byte helpers

    static void putFp16(byte[] out, int at, short h) {
        out[at] = (byte) h;
        out[at + 1] = (byte) (h >> 8);
    }

    static float fp16At(byte[] in, int at) {
        return Float.float16ToFloat((short) ((in[at] & 0xFF) | (in[at + 1] << 8)));
    }

    static int u8(byte[] in, int at) {
        return in[at] & 0xFF;
    }
}
