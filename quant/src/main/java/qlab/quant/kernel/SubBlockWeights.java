package qlab.quant.kernel;

import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import qlab.quant.Int8Activations;
import qlab.quant.PackedWeights;

/**
 * Kernels for formats decoded into 16-value sub-blocks (llama.cpp's k-quants and IQ4): every
 * value's integer level as a byte, and per 16 values an f32 scale and an f32 min, with
 * weight = scale × level − min in f32, bitwise the format's dequantized value. The levels are a
 * copy made at pack time ({@code rows × paddedCols} bytes), so one pass reads about 1.5 bytes per
 * weight whatever the stored bits.
 *
 * <p>f32-activation kernels: each chunk of {@link Lanes#COUNT} levels is widened to floats,
 * turned into the exact weights by one multiply and one subtract, and accumulated with one FMA
 * per lane; lanes are summed in index order and the values past the last whole chunk are added
 * by scalar code. The batched kernels run the same operations per token.
 *
 * <p>int8-activation kernels (activations in blocks of {@link #ACTIVATION_BLOCK}): per 16 values
 * the exact integer sums Σ level × code and Σ code, then, sub-block after sub-block, in double,
 * y += (Σ level·code × scale − Σ code × min) × activation scale; y is rounded to float once.
 * The vector kernel forms the integer sums with int lanes and does the other steps in the same
 * order as the scalar reference, so every int8 kernel gives the reference's bits.
 */
public final class SubBlockWeights extends PackedWeights {
    private static final int SUB = 16;
    /** Values per activation scale on the int8 path. */
    public static final int ACTIVATION_BLOCK = 32;

    private final int stride;
    private final byte[] levels;   // [rows, stride]
    private final float[] scales;  // [rows, stride / 16]
    private final float[] mins;    // [rows, stride / 16], or null: every min 0
    private final int vectorEnd;

    /**
     * @param stride values stored per row (cols padded to the format's block, a multiple of 16)
     * @param levels rows × stride levels
     * @param scales rows × stride / 16 effective scales
     * @param mins rows × stride / 16 effective mins, or null for a format without mins (all 0)
     */
    public SubBlockWeights(int rows, int cols, int stride, byte[] levels, float[] scales, float[] mins) {
        super(rows, cols);
        if (stride % SUB != 0 || stride < cols) {
            throw new IllegalArgumentException("stride " + stride + " must be a multiple of 16 and hold " + cols + " columns");
        }
        if (levels.length != (long) rows * stride || scales.length != rows * (stride / SUB)
                || mins != null && mins.length != scales.length) {
            throw new IllegalArgumentException("levels, scales and mins do not match " + rows + " rows of " + stride);
        }
        this.stride = stride;
        this.levels = levels;
        this.scales = scales;
        this.mins = mins;
        this.vectorEnd = cols & -Lanes.COUNT;
    }

    @Override
    public long kernelBytes() {
        return (long) rows * stride + (mins == null ? 4L : 8L) * scales.length;
    }

    @Override
    public boolean tilesBatches() {
        return true;
    }

    /** The min of sub-block s; 0 (subtracting it changes no bits) for formats without mins. */
    private float min(int s) {
        return mins == null ? 0f : mins[s];
    }

    private float weight(int row, int j) {
        int s = row * (stride / SUB) + j / SUB;
        return scales[s] * levels[row * stride + j] - min(s);
    }

    @Override
    public void dequantizeRow(int row, float[] dst, int dstOffset) {
        for (int j = 0; j < cols; j++) {
            dst[dstOffset + j] = weight(row, j);
        }
    }

    @Override
    public void dequantizeRowVector(int row, float[] dst, int dstOffset) {
        if (!PackedWeights.VECTOR_ENABLED) {
            dequantizeRow(row, dst, dstOffset);
            return;
        }
        int base = row * stride;
        int s0 = row * (stride / SUB);
        int j = 0;
        for (; j < vectorEnd; j += Lanes.COUNT) {
            int s = s0 + j / SUB;
            weights(base + j, scales[s], min(s)).intoArray(dst, dstOffset + j);
        }
        for (; j < cols; j++) {
            dst[dstOffset + j] = weight(row, j);
        }
    }

    /** The exact weights of the chunk at levels[at], one per lane: scale × level − min. */
    private FloatVector weights(int at, float scale, float min) {
        FloatVector level = (FloatVector) ByteVector.fromArray(Lanes.BYTES, levels, at).castShape(Lanes.FLOATS, 0);
        return level.mul(scale).sub(min);
    }

    @Override
    public float dotScalar(int row, float[] x, int xOffset) {
        float sum = 0;
        for (int j = 0; j < cols; j++) {
            sum += weight(row, j) * x[xOffset + j];
        }
        return sum;
    }

    @Override
    public float dotVector(int row, float[] x, int xOffset) {
        int base = row * stride;
        int s0 = row * (stride / SUB);
        FloatVector acc = FloatVector.zero(Lanes.FLOATS);
        int j = 0;
        for (; j < vectorEnd; j += Lanes.COUNT) {
            int s = s0 + j / SUB;
            acc = weights(base + j, scales[s], min(s)).fma(FloatVector.fromArray(Lanes.FLOATS, x, xOffset + j), acc);
        }
        float sum = Lanes.sumInOrder(acc);
        for (; j < cols; j++) {
            sum += weight(row, j) * x[xOffset + j];
        }
        return sum;
    }

    /** Two tokens per pass over the row's levels; per token the operations of {@link #dotVector}. */
    @Override
    public void dotBatchVector(int row, float[] x, int xOffset, int tokens, float[] y, int yOffset, int yStride) {
        int base = row * stride;
        int s0 = row * (stride / SUB);
        int t = 0;
        for (; t + 2 <= tokens; t += 2) {
            int x0 = xOffset + t * cols;
            int x1 = x0 + cols;
            FloatVector acc0 = FloatVector.zero(Lanes.FLOATS);
            FloatVector acc1 = acc0;
            int j = 0;
            for (; j < vectorEnd; j += Lanes.COUNT) {
                int s = s0 + j / SUB;
                FloatVector w = weights(base + j, scales[s], min(s));
                acc0 = w.fma(FloatVector.fromArray(Lanes.FLOATS, x, x0 + j), acc0);
                acc1 = w.fma(FloatVector.fromArray(Lanes.FLOATS, x, x1 + j), acc1);
            }
            float sum0 = Lanes.sumInOrder(acc0);
            float sum1 = Lanes.sumInOrder(acc1);
            for (; j < cols; j++) {
                float w = weight(row, j);
                sum0 += w * x[x0 + j];
                sum1 += w * x[x1 + j];
            }
            y[yOffset + t * yStride] = sum0;
            y[yOffset + (t + 1) * yStride] = sum1;
        }
        if (t < tokens) {
            y[yOffset + t * yStride] = dotVector(row, x, xOffset + t * cols);
        }
    }

    // ---------------------------------------------------------------- int8 activations

    @Override
    public boolean hasInt8Path() {
        return true;
    }

    @Override
    public int activationBlock() {
        return ACTIVATION_BLOCK;
    }

    private void checkActivations(Int8Activations a) {
        if (a.cols() != cols || a.block() != ACTIVATION_BLOCK) {
            throw new IllegalArgumentException("activations [" + a.cols() + " cols, block " + a.block()
                    + "] do not match weights [" + cols + " cols, block " + ACTIVATION_BLOCK + "]");
        }
    }

    @Override
    public float dotInt8Scalar(int row, Int8Activations a, int token) {
        checkActivations(a);
        byte[] codes = a.codes();
        int xc = token * cols;
        int base = row * stride;
        double sum = 0;
        for (int j0 = 0; j0 < cols; j0 += SUB) {
            int isum = 0;
            int csum = 0;
            for (int j = j0, end = Math.min(cols, j0 + SUB); j < end; j++) {
                isum += levels[base + j] * codes[xc + j];
                csum += codes[xc + j];
            }
            sum = step(sum, row, a, token, j0, isum, csum);
        }
        return (float) sum;
    }

    /**
     * One sub-block's floating-point steps, the same in every int8 kernel: sum += (Σ level·code ×
     * scale − Σ code × min) × activation scale, in double. Both products are exact in double (a
     * 24-bit significand times an integer below 2^17), so the difference, where the min cancels
     * most of the scaled levels, loses nothing a float product would.
     */
    private double step(double sum, int row, Int8Activations a, int token, int j0, int isum, int csum) {
        int s = row * (stride / SUB) + j0 / SUB;
        double as = a.scales()[token * a.blocksPerRow() + j0 / ACTIVATION_BLOCK];
        return sum + ((double) isum * scales[s] - (double) csum * min(s)) * as;
    }

    @Override
    public float dotInt8Vector(int row, Int8Activations a, int token) {
        checkActivations(a);
        return dotInt8Vector(row, a, token, codeSums(a, token));
    }

    /** Σ code of every 16 activation codes of a token (the last sub-block may be partial). */
    private int[] codeSums(Int8Activations a, int token) {
        byte[] codes = a.codes();
        int xc = token * cols;
        int[] sums = new int[(cols + SUB - 1) / SUB];
        for (int j = 0; j < cols; j++) {
            sums[j / SUB] += codes[xc + j];
        }
        return sums;
    }

    /** {@link #dotInt8Vector} with the token's code sums per 16 values given. */
    private float dotInt8Vector(int row, Int8Activations a, int token, int[] codeSums) {
        byte[] codes = a.codes();
        int xc = token * cols;
        int base = row * stride;
        int wholeSubBlocks = cols & -SUB;
        double sum = 0;
        int j0 = 0;
        for (; j0 < wholeSubBlocks; j0 += SUB) {
            IntVector products = IntVector.zero(Lanes.INTS);
            for (int j = j0; j < j0 + SUB; j += Lanes.COUNT) {
                IntVector q = (IntVector) ByteVector.fromArray(Lanes.BYTES, codes, xc + j).castShape(Lanes.INTS, 0);
                IntVector l = (IntVector) ByteVector.fromArray(Lanes.BYTES, levels, base + j).castShape(Lanes.INTS, 0);
                products = l.mul(q).add(products);
            }
            sum = step(sum, row, a, token, j0, products.reduceLanes(VectorOperators.ADD), codeSums[j0 / SUB]);
        }
        if (j0 < cols) {
            int isum = 0;
            for (int j = j0; j < cols; j++) {
                isum += levels[base + j] * codes[xc + j];
            }
            sum = step(sum, row, a, token, j0, isum, codeSums[j0 / SUB]);
        }
        return (float) sum;
    }

    @Override
    public void dotInt8BatchVector(int row, Int8Activations a, float[] y, int yOffset, int yStride) {
        for (int t = 0; t < a.tokens(); t++) {
            y[yOffset + t * yStride] = dotInt8Vector(row, a, t);
        }
    }

    /**
     * Every row and token by {@link #dotInt8Vector}, the tokens' code sums computed once per call:
     * the reference's bits (integer sums are exact in any order).
     */
    @Override
    public void dotInt8Rows(int rowStart, int rowEnd, Int8Strips.Activations x, float[] y, int yOffset, int yStride) {
        Int8Activations a = x.codes();
        checkActivations(a);
        if (!PackedWeights.VECTOR_ENABLED) {
            super.dotInt8Rows(rowStart, rowEnd, x, y, yOffset, yStride);
            return;
        }
        int[][] codeSums = new int[a.tokens()][];
        for (int t = 0; t < a.tokens(); t++) {
            codeSums[t] = codeSums(a, t);
        }
        for (int r = rowStart; r < rowEnd; r++) {
            for (int t = 0; t < a.tokens(); t++) {
                y[yOffset + r + t * yStride] = dotInt8Vector(r, a, t, codeSums[t]);
            }
        }
    }
}
