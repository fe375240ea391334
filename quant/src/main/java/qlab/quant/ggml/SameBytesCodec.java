package qlab.quant.ggml;

import java.lang.foreign.MemorySegment;

/**
 * F32, F16, BF16: a qlab row of a float format is already ggml's row (one little-endian element
 * per value, no scale, no padding), so both directions copy the bytes.
 */
public record SameBytesCodec(GgmlType type) implements GgmlCodec {

    public SameBytesCodec {
        if (type.blockSize != 1) {
            throw new IllegalArgumentException(type + " is a block type, not a float element");
        }
    }

    @Override
    public void toGgml(MemorySegment src, long srcOffset, int cols, MemorySegment dst, long dstOffset) {
        MemorySegment.copy(src, srcOffset, dst, dstOffset, type.rowBytes(cols));
    }

    @Override
    public void fromGgml(MemorySegment src, long srcOffset, int cols, MemorySegment dst, long dstOffset) {
        MemorySegment.copy(src, srcOffset, dst, dstOffset, type.rowBytes(cols));
    }
}
