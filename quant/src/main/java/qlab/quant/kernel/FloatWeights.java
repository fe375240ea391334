package qlab.quant.kernel;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import qlab.quant.PackedWeights;

/** Kernels for unquantized rows: f32, f16 and bf16 elements read in place from the segment. */
public final class FloatWeights extends PackedWeights {

    /** Element type of a row. */
    public enum Element {
        F32(4), F16(2), BF16(2);

        public final int bytes;

        Element(int bytes) {
            this.bytes = bytes;
        }
    }

    private static final ValueLayout.OfFloat F32_LE = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort I16_LE = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final Element element;
    private final MemorySegment data;
    private final long rowBytes;
    private final int vectorEnd;

    public FloatWeights(Element element, MemorySegment data, int rows, int cols) {
        super(rows, cols);
        this.element = element;
        this.data = data;
        this.rowBytes = (long) cols * element.bytes;
        this.vectorEnd = cols & -Lanes.COUNT;
    }

    /** Decodes one element the way the vector kernel does, bit for bit. */
    public static float decode(Element element, MemorySegment data, long offset) {
        return switch (element) {
            case F32 -> data.get(F32_LE, offset);
            case F16 -> Float.float16ToFloat(data.get(I16_LE, offset));
            case BF16 -> Float.intBitsToFloat(data.get(I16_LE, offset) << 16);
        };
    }

    @Override
    public long kernelBytes() {
        return rows * rowBytes;
    }

    private float element(long rowStart, int j) {
        return decode(element, data, rowStart + (long) j * element.bytes);
    }

    /*
     * One chunk of elements from j, widened to f32: one method per element, and every loop takes
     * one of them after a switch outside the loop. With a single load() switching inside, its
     * vector came out of a merge of three paths (likely boxed by C2, which keeps vectors in
     * registers only where it sees one species and one path): f32 and bf16 rows at 16 lanes ran
     * at 3.2–3.3 G multiply-adds/s against 8.2 and 10.6 specialized (MatVecBenchmark 4864×896
     * hot, one thread, AVX-512), and bf16 decoded at 11 tok/s where 8 lanes gave 23.
     * castShape sign-extends each short; the shifts and masks discard those bits.
     */
    private FloatVector loadF32(long rowStart, int j) {
        return FloatVector.fromMemorySegment(Lanes.FLOATS, data, rowStart + (long) j * 4, ByteOrder.LITTLE_ENDIAN);
    }

    private FloatVector loadBf16(long rowStart, int j) {
        IntVector h = (IntVector) ShortVector.fromMemorySegment(Lanes.SHORTS, data, rowStart + (long) j * 2, ByteOrder.LITTLE_ENDIAN)
                .castShape(Lanes.INTS, 0);
        return h.lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats();
    }

    /**
     * f16: place exponent and mantissa in an f32 and multiply by 2^112 to rebias the exponent;
     * exact for normals and subnormals alike. Inf/NaN (exponent 31) map to f32 exponent 255.
     */
    private FloatVector loadF16(long rowStart, int j) {
        IntVector h = (IntVector) ShortVector.fromMemorySegment(Lanes.SHORTS, data, rowStart + (long) j * 2, ByteOrder.LITTLE_ENDIAN)
                .castShape(Lanes.INTS, 0);
        IntVector magnitude = h.and(0x7fff);
        IntVector shifted = magnitude.lanewise(VectorOperators.LSHL, 13);
        IntVector finite = shifted.reinterpretAsFloats().mul(0x1p112f).reinterpretAsInts();
        VectorMask<Integer> special = magnitude.compare(VectorOperators.GE, 0x7c00);
        IntVector bits = finite.blend(shifted.or(0x7f800000), special);
        return bits.or(h.and(0x8000).lanewise(VectorOperators.LSHL, 16)).reinterpretAsFloats();
    }



    @Override
    public void dequantizeRow(int row, float[] dst, int dstOffset) {
        long rowStart = row * rowBytes;
        for (int j = 0; j < cols; j++) {
            dst[dstOffset + j] = element(rowStart, j);
        }
    }

    @Override
    public void dequantizeRowVector(int row, float[] dst, int dstOffset) {
        long rowStart = row * rowBytes;
        int j = 0;
        switch (element) {
            case F32 -> {
                for (; j < vectorEnd; j += Lanes.COUNT) {
                    loadF32(rowStart, j).intoArray(dst, dstOffset + j);
                }
            }
            case BF16 -> {
                for (; j < vectorEnd; j += Lanes.COUNT) {
                    loadBf16(rowStart, j).intoArray(dst, dstOffset + j);
                }
            }
            case F16 -> {
                for (; j < vectorEnd; j += Lanes.COUNT) {
                    loadF16(rowStart, j).intoArray(dst, dstOffset + j);
                }
            }
        }
        for (; j < cols; j++) {
            dst[dstOffset + j] = element(rowStart, j);
        }
    }

    /** Batched products go through {@link qlab.engine.tensor.TokenTile} too: widening a row once pays for itself there as well. */
    @Override
    public boolean tilesBatches() {
        return true;
    }

    @Override
    public float dotScalar(int row, float[] x, int xOffset) {
        long rowStart = row * rowBytes;
        float sum = 0;
        for (int j = 0; j < cols; j++) {
            sum += element(rowStart, j) * x[xOffset + j];
        }
        return sum;
    }

    @Override
    public float dotVector(int row, float[] x, int xOffset) {
        long rowStart = row * rowBytes;
        FloatVector acc = FloatVector.zero(Lanes.FLOATS);
        int j = 0;
        switch (element) {
            case F32 -> {
                for (; j < vectorEnd; j += Lanes.COUNT) {
                    acc = loadF32(rowStart, j).fma(FloatVector.fromArray(Lanes.FLOATS, x, xOffset + j), acc);
                }
            }
            case BF16 -> {
                for (; j < vectorEnd; j += Lanes.COUNT) {
                    acc = loadBf16(rowStart, j).fma(FloatVector.fromArray(Lanes.FLOATS, x, xOffset + j), acc);
                }
            }
            case F16 -> {
                for (; j < vectorEnd; j += Lanes.COUNT) {
                    acc = loadF16(rowStart, j).fma(FloatVector.fromArray(Lanes.FLOATS, x, xOffset + j), acc);
                }
            }
        }
        float sum = Lanes.sumInOrder(acc);
        for (; j < cols; j++) {
            sum += element(rowStart, j) * x[xOffset + j];
        }
        return sum;
    }

    @Override
    public void dotBatchVector(int row, float[] x, int xOffset, int tokens, float[] y, int yOffset, int yStride) {
        long rowStart = row * rowBytes;
        int t = 0;
        for (; t + 4 <= tokens; t += 4) {
            int x0 = xOffset + t * cols;
            int x1 = x0 + cols;
            int x2 = x1 + cols;
            int x3 = x2 + cols;
            FloatVector a0 = FloatVector.zero(Lanes.FLOATS);
            FloatVector a1 = a0;
            FloatVector a2 = a0;
            FloatVector a3 = a0;
            int j = 0;
            switch (element) {
                case F32 -> {
                    for (; j < vectorEnd; j += Lanes.COUNT) {
                        FloatVector w = loadF32(rowStart, j);
                        a0 = w.fma(FloatVector.fromArray(Lanes.FLOATS, x, x0 + j), a0);
                        a1 = w.fma(FloatVector.fromArray(Lanes.FLOATS, x, x1 + j), a1);
                        a2 = w.fma(FloatVector.fromArray(Lanes.FLOATS, x, x2 + j), a2);
                        a3 = w.fma(FloatVector.fromArray(Lanes.FLOATS, x, x3 + j), a3);
                    }
                }
                case BF16 -> {
                    for (; j < vectorEnd; j += Lanes.COUNT) {
                        FloatVector w = loadBf16(rowStart, j);
                        a0 = w.fma(FloatVector.fromArray(Lanes.FLOATS, x, x0 + j), a0);
                        a1 = w.fma(FloatVector.fromArray(Lanes.FLOATS, x, x1 + j), a1);
                        a2 = w.fma(FloatVector.fromArray(Lanes.FLOATS, x, x2 + j), a2);
                        a3 = w.fma(FloatVector.fromArray(Lanes.FLOATS, x, x3 + j), a3);
                    }
                }
                case F16 -> {
                    for (; j < vectorEnd; j += Lanes.COUNT) {
                        FloatVector w = loadF16(rowStart, j);
                        a0 = w.fma(FloatVector.fromArray(Lanes.FLOATS, x, x0 + j), a0);
                        a1 = w.fma(FloatVector.fromArray(Lanes.FLOATS, x, x1 + j), a1);
                        a2 = w.fma(FloatVector.fromArray(Lanes.FLOATS, x, x2 + j), a2);
                        a3 = w.fma(FloatVector.fromArray(Lanes.FLOATS, x, x3 + j), a3);
                    }
                }
            }
            float s0 = Lanes.sumInOrder(a0);
            float s1 = Lanes.sumInOrder(a1);
            float s2 = Lanes.sumInOrder(a2);
            float s3 = Lanes.sumInOrder(a3);
            for (; j < cols; j++) {
                float w = element(rowStart, j);
                s0 += w * x[x0 + j];
                s1 += w * x[x1 + j];
                s2 += w * x[x2 + j];
                s3 += w * x[x3 + j];
            }
            int y0 = yOffset + t * yStride;
            y[y0] = s0;
            y[y0 + yStride] = s1;
            y[y0 + 2 * yStride] = s2;
            y[y0 + 3 * yStride] = s3;
        }
        for (; t < tokens; t++) {
            y[yOffset + t * yStride] = dotVector(row, x, xOffset + t * cols);
        }
    }
}
