package qlab.engine.tensor;

import qlab.engine.util.WorkerPool;

/**
 * A weight matrix W [rows, cols] (a linear layer stored as [out_features, in_features]),
 * in whatever storage format; the forward pass only ever multiplies by it or reads a row.
 *
 * <p>A product is done in two steps so that work shared by all rows happens once per call:
 * {@link #prepare} runs on the calling thread (an integer format quantizes the activations
 * there), then {@link #matmul} runs on the workers, each for its own range of rows.
 */
public interface Matrix {
    /**
     * Row ranges handed to threads should start and end on multiples of this: two float vectors'
     * lanes (16 rows with AVX2, 32 with AVX-512), a multiple of every kernel's row group (the int8
     * strips work whole strips of that many rows; a range that cuts one costs that strip twice).
     */
    int ROW_GRAIN = 2 * VectorSupport.LANES;

    int rows();

    int cols();

    /** Bytes the weights occupy in memory (what one full pass over the matrix reads). */
    long byteSize();

    /** Storage format name, e.g. {@code f32}, {@code q8_0}. */
    String format();

    /**
     * Work shared by every row range of one product, done once: x holds {@code tokens} rows of
     * {@link #cols()} activations. The result is handed to each {@link #matmul} call unchanged.
     */
    default Object prepare(float[] x, int tokens) {
        return null;
    }

    /**
     * {@link #prepare}, given {@code sibling}: what another matrix's prepare returned for the same
     * x and tokens. Returned as is when it is what this matrix's own prepare would build (q, k and
     * v of a layer, or gate and up, read the same activations), else this matrix prepares its own.
     */
    default Object prepareLike(Object sibling, float[] x, int tokens) {
        return prepare(x, tokens);
    }

    /**
     * {@link #prepare}, told whether the tokens are consecutive positions of one sequence (a prompt
     * or a scoring window) rather than one token of each of several sequences decoded in lock-step.
     * For a prompt a matrix may take a faster path whose results are within rounding of, but not
     * bitwise, the token-by-token products; batched decode keeps the bits of single-stream decode
     * wherever {@link #prepare} does.
     */
    default Object prepare(float[] x, int tokens, boolean prompt) {
        return prepare(x, tokens);
    }

    /** {@link #prepareLike(Object, float[], int)} for a prompt or not, as {@link #prepare(float[], int, boolean)}. */
    default Object prepareLike(Object sibling, float[] x, int tokens, boolean prompt) {
        return prepareLike(sibling, x, tokens);
    }

    /**
     * {@link #prepare(float[], int, boolean)} with the pool's threads sharing the work where it
     * is worth it (a prompt's activations: quantized and transposed, otherwise one thread's work
     * while the others wait). The same result.
     */
    default Object prepare(float[] x, int tokens, boolean prompt, WorkerPool pool) {
        return prepare(x, tokens, prompt);
    }

    /** {@link #prepareLike(Object, float[], int, boolean)}, with the pool's threads as {@link #prepare(float[], int, boolean, WorkerPool)}. */
    default Object prepareLike(Object sibling, float[] x, int tokens, boolean prompt, WorkerPool pool) {
        return prepareLike(sibling, x, tokens, prompt);
    }

    /**
     * y[t * yStride + yOffset + r] = W[r, :] · x[t, :] for r in [rowStart, rowEnd) and
     * t in [0, tokens). x is row-major [tokens, cols]. Must not write outside those y cells:
     * several workers call it at once on disjoint row ranges.
     */
    void matmul(float[] x, Object prepared, int tokens, float[] y, int yStride, int yOffset, int rowStart, int rowEnd);

    /**
     * The multiple of rows that ranges handed to threads should start and end on, for a product
     * {@link #prepare}d as given: {@link #ROW_GRAIN}, or the tile's panel height where the product
     * goes through {@link TokenTile} (a range that cuts a panel computes the whole panel).
     */
    default int rowGrain(Object prepared) {
        return ROW_GRAIN;
    }

    /** Copies row r, dequantized, into dst[dstOffset .. dstOffset + cols). */
    void copyRow(int row, float[] dst, int dstOffset);
}
