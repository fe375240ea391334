package qlab.quant.kernel;

import jdk.incubator.vector.FloatVector;
import qlab.quant.PackedWeights;

/**
 * Prefill and batched decode over dequantized row blocks: four rows are dequantized into an f32
 * scratch block (level × block scale, each weight rounded to f32 once, exactly as
 * {@link PackedWeights#dequantizeRow} gives it), then multiplied by three tokens at a time in a 4×3
 * register tile: per vector of columns, 4 weight and 3 activation loads feed 12 FMAs, and the 12
 * accumulators plus 4 operands fit the 16 registers of AVX2. The block-wise kernels of
 * {@link GroupKernel} need 6 instructions per 32 multiply-adds and token (the group tree and its
 * scale FMA); here it is 4, and the decode is paid once per row for all tokens.
 *
 * <p>Every product cell is computed the same way whichever tile computes it (4×3, 4×1 or one
 * row): one lane-wise FMA accumulator over the vector-aligned columns in order, the lanes summed
 * in index order, then the remaining columns in order. So a token's result does not depend on the
 * batch around it or on how rows are split between threads. It is not bitwise equal to the
 * single-row kernels, which multiply each group's sum by its scale instead of each weight; both
 * are within the same rounding bound of the exact product (FormatKernelTest checks both).
 */
public final class DequantizedTile {
    private static final int ROWS = 4;

    /** Per worker thread: the dequantized row block, grown to the widest matrix seen. */
    private static final ThreadLocal<float[]> BLOCK = ThreadLocal.withInitial(() -> new float[0]);

    private DequantizedTile() {
    }

    /** y[yOffset + r + t × yStride] = W[r, :] · x[xOffset + t × cols ..] for rows [rowStart, rowEnd), every token. */
    public static void rows(PackedWeights w, int rowStart, int rowEnd, float[] x, int xOffset, int tokens,
                            float[] y, int yOffset, int yStride) {
        int cols = w.cols();
        float[] block = BLOCK.get();
        if (block.length < ROWS * cols) {
            block = new float[ROWS * cols];
            BLOCK.set(block);
        }
        int upper = cols & -Lanes.COUNT;
        int r = rowStart;
        for (; r + ROWS <= rowEnd; r += ROWS) {
            for (int k = 0; k < ROWS; k++) {
                w.dequantizeRowVector(r + k, block, k * cols);
            }
            int t = 0;
            for (; t + 3 <= tokens; t += 3) {
                tile4x3(block, cols, upper, x, xOffset + t * cols, y, yOffset + r + t * yStride, yStride);
            }
            for (; t < tokens; t++) {
                tile4x1(block, cols, upper, x, xOffset + t * cols, y, yOffset + r + t * yStride);
            }
        }
        for (; r < rowEnd; r++) {
            w.dequantizeRowVector(r, block, 0);
            for (int t = 0; t < tokens; t++) {
                y[yOffset + r + t * yStride] = cell(block, 0, cols, upper, x, xOffset + t * cols);
            }
        }
    }

    private static FloatVector v(float[] a, int at) {
        return FloatVector.fromArray(Lanes.FLOATS, a, at);
    }

    private static void tile4x3(float[] w, int cols, int upper, float[] x, int x0, float[] y, int y0, int yStride) {
        int w1 = cols;
        int w2 = 2 * cols;
        int w3 = 3 * cols;
        int x1 = x0 + cols;
        int x2 = x1 + cols;
        FloatVector a00 = FloatVector.zero(Lanes.FLOATS);
        FloatVector a01 = a00;
        FloatVector a02 = a00;
        FloatVector a10 = a00;
        FloatVector a11 = a00;
        FloatVector a12 = a00;
        FloatVector a20 = a00;
        FloatVector a21 = a00;
        FloatVector a22 = a00;
        FloatVector a30 = a00;
        FloatVector a31 = a00;
        FloatVector a32 = a00;
        for (int j = 0; j < upper; j += Lanes.COUNT) {
            FloatVector v0 = v(x, x0 + j);
            FloatVector v1 = v(x, x1 + j);
            FloatVector v2 = v(x, x2 + j);
            FloatVector m = v(w, j);
            a00 = m.fma(v0, a00);
            a01 = m.fma(v1, a01);
            a02 = m.fma(v2, a02);
            m = v(w, w1 + j);
            a10 = m.fma(v0, a10);
            a11 = m.fma(v1, a11);
            a12 = m.fma(v2, a12);
            m = v(w, w2 + j);
            a20 = m.fma(v0, a20);
            a21 = m.fma(v1, a21);
            a22 = m.fma(v2, a22);
            m = v(w, w3 + j);
            a30 = m.fma(v0, a30);
            a31 = m.fma(v1, a31);
            a32 = m.fma(v2, a32);
        }
        int y1 = y0 + yStride;
        int y2 = y1 + yStride;
        y[y0] = tail(w, 0, cols, upper, x, x0, Lanes.sumInOrder(a00));
        y[y1] = tail(w, 0, cols, upper, x, x1, Lanes.sumInOrder(a01));
        y[y2] = tail(w, 0, cols, upper, x, x2, Lanes.sumInOrder(a02));
        y[y0 + 1] = tail(w, w1, cols, upper, x, x0, Lanes.sumInOrder(a10));
        y[y1 + 1] = tail(w, w1, cols, upper, x, x1, Lanes.sumInOrder(a11));
        y[y2 + 1] = tail(w, w1, cols, upper, x, x2, Lanes.sumInOrder(a12));
        y[y0 + 2] = tail(w, w2, cols, upper, x, x0, Lanes.sumInOrder(a20));
        y[y1 + 2] = tail(w, w2, cols, upper, x, x1, Lanes.sumInOrder(a21));
        y[y2 + 2] = tail(w, w2, cols, upper, x, x2, Lanes.sumInOrder(a22));
        y[y0 + 3] = tail(w, w3, cols, upper, x, x0, Lanes.sumInOrder(a30));
        y[y1 + 3] = tail(w, w3, cols, upper, x, x1, Lanes.sumInOrder(a31));
        y[y2 + 3] = tail(w, w3, cols, upper, x, x2, Lanes.sumInOrder(a32));
    }

    private static void tile4x1(float[] w, int cols, int upper, float[] x, int x0, float[] y, int y0) {
        int w1 = cols;
        int w2 = 2 * cols;
        int w3 = 3 * cols;
        FloatVector a0 = FloatVector.zero(Lanes.FLOATS);
        FloatVector a1 = a0;
        FloatVector a2 = a0;
        FloatVector a3 = a0;
        for (int j = 0; j < upper; j += Lanes.COUNT) {
            FloatVector v0 = v(x, x0 + j);
            a0 = v(w, j).fma(v0, a0);
            a1 = v(w, w1 + j).fma(v0, a1);
            a2 = v(w, w2 + j).fma(v0, a2);
            a3 = v(w, w3 + j).fma(v0, a3);
        }
        y[y0] = tail(w, 0, cols, upper, x, x0, Lanes.sumInOrder(a0));
        y[y0 + 1] = tail(w, w1, cols, upper, x, x0, Lanes.sumInOrder(a1));
        y[y0 + 2] = tail(w, w2, cols, upper, x, x0, Lanes.sumInOrder(a2));
        y[y0 + 3] = tail(w, w3, cols, upper, x, x0, Lanes.sumInOrder(a3));
    }

    /** One cell: the same operations as a tile's cell. */
    private static float cell(float[] w, int w0, int cols, int upper, float[] x, int x0) {
        FloatVector a = FloatVector.zero(Lanes.FLOATS);
        for (int j = 0; j < upper; j += Lanes.COUNT) {
            a = v(w, w0 + j).fma(v(x, x0 + j), a);
        }
        return tail(w, w0, cols, upper, x, x0, Lanes.sumInOrder(a));
    }

    /** Adds the columns past the last whole vector, in order. */
    private static float tail(float[] w, int w0, int cols, int upper, float[] x, int x0, float s) {
        for (int j = upper; j < cols; j++) {
            s += w[w0 + j] * x[x0 + j];
        }
        return s;
    }
}
