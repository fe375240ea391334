package qlab.quant;

import qlab.engine.tensor.TokenColumns;
import qlab.engine.tensor.TokenTile;
import qlab.quant.kernel.Int8Strips;
import qlab.quant.kernel.Lanes;

/**
 * Stored rows as the kernels read them: the packed codes in their {@link java.lang.foreign.MemorySegment}
 * plus, for block formats, every block's scale widened once to f32 (so the hot loop never converts
 * an fp16 or multiplies two u8 scales). {@link #kernelBytes()} is what one pass over all rows reads;
 * it differs from the storage size by the widened scales.
 *
 * <p>Kernels: {@code dot*} take f32 activations, {@code dotInt8*} take activations quantized by
 * {@link Int8Activations} (integer formats only). Each has a scalar reference and a Vector API kernel
 * ({@link Lanes#COUNT} float lanes: 16 with AVX-512, 8 with AVX2); the plain method picks the vector
 * one unless {@code -Dqlab.vector=false} or the CPU has fewer than 8 float lanes. The batched kernels compute, for each of {@code tokens}
 * activation rows, bitwise the same value as the single-row kernel of the same kind: they do the
 * same operations per token in the same order, only reading each weight chunk once for up to four
 * tokens. {@link #dotBatchRowsTiled} is the exception: faster, and equal to the others only within
 * rounding. All kernels are thread-safe.
 */
public abstract class PackedWeights {

    /** Vector kernels on unless {@code -Dqlab.vector=false} or the CPU has fewer than 8 float lanes. */
    public static final boolean VECTOR_ENABLED =
            Boolean.parseBoolean(System.getProperty("qlab.vector", "true")) && Lanes.SUPPORTED;

    protected final int rows;
    protected final int cols;

    protected PackedWeights(int rows, int cols) {
        this.rows = rows;
        this.cols = cols;
    }

    public final int rows() {
        return rows;
    }

    public final int cols() {
        return cols;
    }

    /** Bytes read by one pass of the kernels over every row (codes plus f32 scales). */
    public abstract long kernelBytes();

    /**
     * Bytes one pass of {@link #dotInt8Rows} reads: what it streams once {@link #prepareInt8Rows}
     * has run (block formats: the 16-row strips, where levels of 1, 2 or 4 bits all take a nibble),
     * {@link #kernelBytes} where there is nothing repacked.
     */
    public long int8KernelBytes() {
        return kernelBytes();
    }

    /** Row {@code row}, dequantized into dst[dstOffset .. dstOffset + cols). */
    public abstract void dequantizeRow(int row, float[] dst, int dstOffset);

    /** {@link #dequantizeRow} by vector code where a format has it: the same values, bit for bit. */
    public void dequantizeRowVector(int row, float[] dst, int dstOffset) {
        dequantizeRow(row, dst, dstOffset);
    }

    /**
     * Whether batched products are faster through {@link #dotBatchRowsTiled} (rows dequantized
     * once per call, then {@link TokenTile}) than through {@link #dotBatchRows}.
     */
    public boolean tilesBatches() {
        return false;
    }

    /**
     * Batched product over dequantized rows ({@link TokenTile}): y[yOffset + r + t × yStride]
     * for rows [rowStart, rowEnd) and every token of {@code x}. Each cell is the fma fold of the
     * dequantized row with the token's activations ({@link TokenTile#cellScalar}), the same
     * bits whatever the batch, the row split and {@code -Dqlab.vector}, but not bitwise equal to
     * {@link #dot}: the block kernels multiply a group's sum by its scale, this multiplies each weight.
     */
    public final void dotBatchRowsTiled(int rowStart, int rowEnd, TokenColumns x, float[] y, int yOffset,
                                        int yStride) {
        if (VECTOR_ENABLED) {
            TokenTile.rows(this::dequantizeRowVector, cols, rowStart, rowEnd, x, y, yOffset, yStride);
        } else {
            float[] row = new float[cols];
            for (int r = rowStart; r < rowEnd; r++) {
                dequantizeRow(r, row, 0);
                for (int t = 0; t < x.tokens(); t++) {
                    y[yOffset + r + t * yStride] = TokenTile.cellScalar(row, 0, x, t);
                }
            }
        }
    }

    /** {@link #dotBatchRowsTiled(int, int, TokenColumns, float[], int, int)} on x[xOffset + t × cols ..], t in [0, tokens). */
    public final void dotBatchRowsTiled(int rowStart, int rowEnd, float[] x, int xOffset, int tokens, float[] y,
                                        int yOffset, int yStride) {
        dotBatchRowsTiled(rowStart, rowEnd, TokenColumns.of(x, xOffset, cols, tokens), y, yOffset, yStride);
    }

    /** Scalar reference: W[row, :] · x[xOffset .. xOffset + cols). */
    public abstract float dotScalar(int row, float[] x, int xOffset);

    /** Vector API kernel for the same product. */
    public abstract float dotVector(int row, float[] x, int xOffset);

    /**
     * Vector API batched kernel: y[yOffset + t * yStride] = W[row, :] · x[xOffset + t * cols ..]
     * for t in [0, tokens); bitwise equal to {@link #dotVector} per token.
     */
    public abstract void dotBatchVector(int row, float[] x, int xOffset, int tokens, float[] y, int yOffset, int yStride);

    /**
     * {@link #dotBatchVector} for rows [rowStart, rowEnd): y[yOffset + r + t × yStride]. Formats
     * that need per-row scratch space override it to allocate that once per call.
     */
    public void dotBatchRowsVector(int rowStart, int rowEnd, float[] x, int xOffset, int tokens, float[] y,
                                   int yOffset, int yStride) {
        for (int r = rowStart; r < rowEnd; r++) {
            dotBatchVector(r, x, xOffset, tokens, y, yOffset + r, yStride);
        }
    }

    /** Batched product for rows [rowStart, rowEnd); bitwise equal per row and token to {@link #dot}. */
    public final void dotBatchRows(int rowStart, int rowEnd, float[] x, int xOffset, int tokens, float[] y,
                                   int yOffset, int yStride) {
        if (VECTOR_ENABLED) {
            dotBatchRowsVector(rowStart, rowEnd, x, xOffset, tokens, y, yOffset, yStride);
        } else {
            for (int r = rowStart; r < rowEnd; r++) {
                for (int t = 0; t < tokens; t++) {
                    y[yOffset + r + t * yStride] = dotScalar(r, x, xOffset + t * cols);
                }
            }
        }
    }

    public final float dot(int row, float[] x, int xOffset) {
        return VECTOR_ENABLED ? dotVector(row, x, xOffset) : dotScalar(row, x, xOffset);
    }

    /** Batched product; bitwise equal per token to {@link #dot}. */
    public final void dotBatch(int row, float[] x, int xOffset, int tokens, float[] y, int yOffset, int yStride) {
        if (VECTOR_ENABLED) {
            dotBatchVector(row, x, xOffset, tokens, y, yOffset, yStride);
        } else {
            for (int t = 0; t < tokens; t++) {
                y[yOffset + t * yStride] = dotScalar(row, x, xOffset + t * cols);
            }
        }
    }

    /** True for integer formats, which also have the int8-activation kernels. */
    public boolean hasInt8Path() {
        return false;
    }

    /** Values per activation scale for the int8 path (the weights' scale block); 0 without one. */
    public int activationBlock() {
        return 0;
    }

    /** Scalar reference of the int8-activation product with token {@code token} of {@code a}. */
    public float dotInt8Scalar(int row, Int8Activations a, int token) {
        throw new UnsupportedOperationException("no int8-activation kernel for " + getClass().getSimpleName());
    }

    /** Vector API kernel of the int8-activation product. */
    public float dotInt8Vector(int row, Int8Activations a, int token) {
        throw new UnsupportedOperationException("no int8-activation kernel for " + getClass().getSimpleName());
    }

    /** Batched int8-activation kernel over every token of {@code a}; bitwise equal to {@link #dotInt8Vector}. */
    public void dotInt8BatchVector(int row, Int8Activations a, float[] y, int yOffset, int yStride) {
        throw new UnsupportedOperationException("no int8-activation kernel for " + getClass().getSimpleName());
    }

    /**
     * Builds what {@link #dotInt8Rows} reads, once (block formats: a copy of the weights repacked
     * into {@link Int8Strips}); call before the first product. A no-op where there is nothing to build.
     */
    public void prepareInt8Rows() {
    }

    /**
     * int8-activation product for rows [rowStart, rowEnd) and every token:
     * y[yOffset + r + t × yStride], bitwise {@link #dotInt8Scalar} for every row and token.
     */
    public void dotInt8Rows(int rowStart, int rowEnd, Int8Strips.Activations x, float[] y, int yOffset, int yStride) {
        Int8Activations a = x.codes();
        for (int r = rowStart; r < rowEnd; r++) {
            for (int t = 0; t < a.tokens(); t++) {
                y[yOffset + r + t * yStride] = dotInt8Scalar(r, a, t);
            }
        }
    }

    public final float dotInt8(int row, Int8Activations a, int token) {
        return VECTOR_ENABLED ? dotInt8Vector(row, a, token) : dotInt8Scalar(row, a, token);
    }

    /** Batched int8-activation product; bitwise equal per token to {@link #dotInt8}. */
    public final void dotInt8Batch(int row, Int8Activations a, float[] y, int yOffset, int yStride) {
        if (VECTOR_ENABLED) {
            dotInt8BatchVector(row, a, y, yOffset, yStride);
        } else {
            for (int t = 0; t < a.tokens(); t++) {
                y[yOffset + t * yStride] = dotInt8Scalar(row, a, t);
            }
        }
    }
}
