package qlab.engine.tensor;

import static qlab.engine.tensor.VectorSupport.F;
import static qlab.engine.tensor.VectorSupport.LANES;

import jdk.incubator.vector.FloatVector;
import qlab.engine.util.WorkerPool;

/**
 * An f32 weight matrix W [rows, cols], row-major on the heap.
 *
 * <p>Below {@link #TILED_FROM_TOKENS} tokens every product cell is computed the same way whichever
 * path runs it (one row or four, one token or four): a lane-wise FMA accumulator over the
 * vector-aligned columns in order, a fixed lane sum, then the scalar tail. So a batched product
 * gives bitwise the same numbers per row as the single-token one, and batched decode of fewer
 * sequences reproduces single-stream decode exactly. From {@link #TILED_FROM_TOKENS} tokens on
 * (prefill) the vector path runs {@link TokenTile} over the rows as they are, which is about twice
 * as fast and agrees with the other paths within float round-off, not bitwise.
 */
public final class F32Matrix implements Matrix {

    /**
     * Products of this many tokens or more run {@link TokenTile}. 32, not the quantized formats'
     * one vector of tokens: batched decode of up to 31 f32 sequences stays bitwise equal to
     * single-stream decode (the reference path), and prefill, where the tile pays most, has more
     * tokens than that. f32 prefill of 64 tokens, 2 threads: docs/performance.md.
     */
    public static final int TILED_FROM_TOKENS = 32;

    private final float[] w; // [rows * cols]
    private final int rows;
    private final int cols;

    public F32Matrix(float[] w, int rows, int cols) {
        if ((long) rows * cols != w.length) {
            throw new IllegalArgumentException("F32Matrix " + rows + "x" + cols + " with " + w.length + " values");
        }
        this.w = w;
        this.rows = rows;
        this.cols = cols;
    }

    @Override
    public int rows() {
        return rows;
    }

    @Override
    public int cols() {
        return cols;
    }

    @Override
    public long byteSize() {
        return 4L * w.length;
    }

    @Override
    public String format() {
        return "f32";
    }

    /** The backing array (row-major), for code that needs the raw weights (quantizers, references). */
    public float[] data() {
        return w;
    }

    @Override
    public void copyRow(int row, float[] dst, int dstOffset) {
        System.arraycopy(w, row * cols, dst, dstOffset, cols);
    }

    @Override
    public Object prepare(float[] x, int tokens) {
        return prepare(x, tokens, false, null);
    }

    @Override
    public Object prepare(float[] x, int tokens, boolean prompt, WorkerPool pool) {
        return VectorSupport.ENABLED && tokens >= TILED_FROM_TOKENS ? TokenColumns.of(x, 0, cols, tokens, pool) : null;
    }

    /** The sibling's transposed tokens when they are these (q, k and v; gate and up), else this one's own. */
    @Override
    public Object prepareLike(Object sibling, float[] x, int tokens, boolean prompt, WorkerPool pool) {
        if (sibling instanceof TokenColumns s && s.cols() == cols && s.tokens() == tokens) {
            return s;
        }
        return prepare(x, tokens, prompt, pool);
    }

    @Override
    public int rowGrain(Object prepared) {
        return prepared instanceof TokenColumns columns ? TokenTile.panelRows(columns.tokens()) : ROW_GRAIN;
    }

    @Override
    public void matmul(float[] x, Object prepared, int tokens, float[] y, int yStride, int yOffset, int rowStart, int rowEnd) {
        if (!VectorSupport.ENABLED) {
            matmulScalar(x, tokens, y, yStride, yOffset, rowStart, rowEnd);
            return;
        }
        if (prepared instanceof TokenColumns columns) {
            TokenTile.rows((row, dst, offset) -> System.arraycopy(w, row * cols, dst, offset, cols), cols,
                    rowStart, rowEnd, columns, y, yOffset, yStride);
            return;
        }
        int r = rowStart;
        if (tokens == 1) {
            // Decode: four rows per pass, four memory streams per thread keep DRAM busy.
            for (; r + 4 <= rowEnd; r += 4) {
                dot4x1(r, x, y, yOffset);
            }
        } else {
            // Prefill / batched decode: a 4x4 register tile reads each weight vector once for four tokens.
            for (; r + 4 <= rowEnd; r += 4) {
                int t = 0;
                for (; t + 4 <= tokens; t += 4) {
                    dot4x4(r, x, t, y, yStride, yOffset);
                }
                for (; t < tokens; t++) {
                    for (int rr = r; rr < r + 4; rr++) {
                        y[t * yStride + yOffset + rr] = dot1(rr, x, t * cols);
                    }
                }
            }
        }
        for (; r < rowEnd; r++) {
            for (int t = 0; t < tokens; t++) {
                y[t * yStride + yOffset + r] = dot1(r, x, t * cols);
            }
        }
    }

    /** The specification: a plain loop per cell. */
    public void matmulScalar(float[] x, int tokens, float[] y, int yStride, int yOffset, int rowStart, int rowEnd) {
        for (int r = rowStart; r < rowEnd; r++) {
            for (int t = 0; t < tokens; t++) {
                y[t * yStride + yOffset + r] = FloatKernels.dotScalar(w, r * cols, x, t * cols, cols);
            }
        }
    }

    private float dot1(int r, float[] x, int xo) {
        return FloatKernels.dot(w, r * cols, x, xo, cols);
    }

    private void dot4x1(int r, float[] x, float[] y, int yOffset) {
        int upper = F.loopBound(cols);
        int o0 = r * cols;
        int o1 = o0 + cols;
        int o2 = o1 + cols;
        int o3 = o2 + cols;
        FloatVector a0 = FloatVector.zero(F);
        FloatVector a1 = FloatVector.zero(F);
        FloatVector a2 = FloatVector.zero(F);
        FloatVector a3 = FloatVector.zero(F);
        for (int i = 0; i < upper; i += LANES) {
            FloatVector xv = FloatVector.fromArray(F, x, i);
            a0 = FloatVector.fromArray(F, w, o0 + i).fma(xv, a0);
            a1 = FloatVector.fromArray(F, w, o1 + i).fma(xv, a1);
            a2 = FloatVector.fromArray(F, w, o2 + i).fma(xv, a2);
            a3 = FloatVector.fromArray(F, w, o3 + i).fma(xv, a3);
        }
        float s0 = VectorSupport.sum(a0);
        float s1 = VectorSupport.sum(a1);
        float s2 = VectorSupport.sum(a2);
        float s3 = VectorSupport.sum(a3);
        for (int i = upper; i < cols; i++) {
            s0 += w[o0 + i] * x[i];
            s1 += w[o1 + i] * x[i];
            s2 += w[o2 + i] * x[i];
            s3 += w[o3 + i] * x[i];
        }
        y[yOffset + r] = s0;
        y[yOffset + r + 1] = s1;
        y[yOffset + r + 2] = s2;
        y[yOffset + r + 3] = s3;
    }

    private void dot4x4(int r, float[] x, int t, float[] y, int yStride, int yOffset) {
        int upper = F.loopBound(cols);
        int w0 = r * cols;
        int w1 = w0 + cols;
        int w2 = w1 + cols;
        int w3 = w2 + cols;
        int x0 = t * cols;
        int x1 = x0 + cols;
        int x2 = x1 + cols;
        int x3 = x2 + cols;
        FloatVector a00 = FloatVector.zero(F), a01 = a00, a02 = a00, a03 = a00;
        FloatVector a10 = a00, a11 = a00, a12 = a00, a13 = a00;
        FloatVector a20 = a00, a21 = a00, a22 = a00, a23 = a00;
        FloatVector a30 = a00, a31 = a00, a32 = a00, a33 = a00;
        for (int i = 0; i < upper; i += LANES) {
            FloatVector v0 = FloatVector.fromArray(F, x, x0 + i);
            FloatVector v1 = FloatVector.fromArray(F, x, x1 + i);
            FloatVector v2 = FloatVector.fromArray(F, x, x2 + i);
            FloatVector v3 = FloatVector.fromArray(F, x, x3 + i);
            FloatVector m = FloatVector.fromArray(F, w, w0 + i);
            a00 = m.fma(v0, a00);
            a01 = m.fma(v1, a01);
            a02 = m.fma(v2, a02);
            a03 = m.fma(v3, a03);
            m = FloatVector.fromArray(F, w, w1 + i);
            a10 = m.fma(v0, a10);
            a11 = m.fma(v1, a11);
            a12 = m.fma(v2, a12);
            a13 = m.fma(v3, a13);
            m = FloatVector.fromArray(F, w, w2 + i);
            a20 = m.fma(v0, a20);
            a21 = m.fma(v1, a21);
            a22 = m.fma(v2, a22);
            a23 = m.fma(v3, a23);
            m = FloatVector.fromArray(F, w, w3 + i);
            a30 = m.fma(v0, a30);
            a31 = m.fma(v1, a31);
            a32 = m.fma(v2, a32);
            a33 = m.fma(v3, a33);
        }
        store(x, y, yStride, yOffset, r, t, upper, x0, w0, VectorSupport.sum(a00));
        store(x, y, yStride, yOffset, r, t + 1, upper, x1, w0, VectorSupport.sum(a01));
        store(x, y, yStride, yOffset, r, t + 2, upper, x2, w0, VectorSupport.sum(a02));
        store(x, y, yStride, yOffset, r, t + 3, upper, x3, w0, VectorSupport.sum(a03));
        store(x, y, yStride, yOffset, r + 1, t, upper, x0, w1, VectorSupport.sum(a10));
        store(x, y, yStride, yOffset, r + 1, t + 1, upper, x1, w1, VectorSupport.sum(a11));
        store(x, y, yStride, yOffset, r + 1, t + 2, upper, x2, w1, VectorSupport.sum(a12));
        store(x, y, yStride, yOffset, r + 1, t + 3, upper, x3, w1, VectorSupport.sum(a13));
        store(x, y, yStride, yOffset, r + 2, t, upper, x0, w2, VectorSupport.sum(a20));
        store(x, y, yStride, yOffset, r + 2, t + 1, upper, x1, w2, VectorSupport.sum(a21));
        store(x, y, yStride, yOffset, r + 2, t + 2, upper, x2, w2, VectorSupport.sum(a22));
        store(x, y, yStride, yOffset, r + 2, t + 3, upper, x3, w2, VectorSupport.sum(a23));
        store(x, y, yStride, yOffset, r + 3, t, upper, x0, w3, VectorSupport.sum(a30));
        store(x, y, yStride, yOffset, r + 3, t + 1, upper, x1, w3, VectorSupport.sum(a31));
        store(x, y, yStride, yOffset, r + 3, t + 2, upper, x2, w3, VectorSupport.sum(a32));
        store(x, y, yStride, yOffset, r + 3, t + 3, upper, x3, w3, VectorSupport.sum(a33));
    }

    /** Adds the scalar tail (columns past the last full vector) and stores the cell. */
    private void store(float[] x, float[] y, int yStride, int yOffset, int r, int t, int upper, int xo, int wo, float s) {
        for (int i = upper; i < cols; i++) {
            s += w[wo + i] * x[xo + i];
        }
        y[t * yStride + yOffset + r] = s;
    }
}
