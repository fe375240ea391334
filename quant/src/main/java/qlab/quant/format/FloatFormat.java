package qlab.quant.format;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import qlab.quant.PackedWeights;
import qlab.quant.QuantFormat;
import qlab.quant.kernel.FloatWeights;

/** An unquantized format: each value stored as one {@link FloatWeights.Element}, no scale, no padding. */
public abstract class FloatFormat implements QuantFormat {
    private static final ValueLayout.OfFloat F32_LE = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort I16_LE = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final String name;
    private final FloatWeights.Element element;

    FloatFormat(String name, FloatWeights.Element element) {
        this.name = name;
        this.element = element;
    }

    @Override
    public final String name() {
        return name;
    }

    @Override
    public final int groupSize() {
        return 1;
    }

    @Override
    public final String label() {
        return name;
    }

    @Override
    public final boolean isInteger() {
        return false;
    }

    @Override
    public final long bytesPerRow(int cols) {
        return (long) cols * element.bytes;
    }

    /** The stored 16 bits of v (f16, bf16); unused for f32. */
    abstract short narrow(float v);

    @Override
    public final void quantizeRow(float[] src, int srcOffset, int cols, float[] importance, MemorySegment dst, long dstOffset) {
        for (int j = 0; j < cols; j++) {
            long at = dstOffset + (long) j * element.bytes;
            if (element == FloatWeights.Element.F32) {
                dst.set(F32_LE, at, src[srcOffset + j]);
            } else {
                dst.set(I16_LE, at, narrow(src[srcOffset + j]));
            }
        }
    }

    @Override
    public final void dequantizeRow(MemorySegment src, long srcOffset, int cols, float[] dst, int dstOffset) {
        for (int j = 0; j < cols; j++) {
            dst[dstOffset + j] = FloatWeights.decode(element, src, srcOffset + (long) j * element.bytes);
        }
    }

    @Override
    public final PackedWeights pack(MemorySegment data, int rows, int cols) {
        return new FloatWeights(element, data, rows, cols);
    }

    @Override
    public String toString() {
        return name;
    }
}
