package qlab.engine.tensor;

/**
 * The activations of a batched product, transposed for {@link TokenTile}: tokens become the
 * vector lanes, so a tile multiplies one broadcast weight by a whole vector of tokens.
 *
 * <p>The tokens are split into chunks of {@link #CHUNK} tokens (the last one {@link VectorSupport#LANES}
 * when fewer remain) and padded with zero columns to a whole vector. Chunk c, starting at token
 * t0 and w tokens wide, holds its values column by column: token t's activation of column k is at
 * {@code t0 × cols + k × w + (t − t0)}, so a tile walks each chunk's memory in order. Built once
 * per product (on the calling thread) and read by every worker.
 */
public final class TokenColumns {
    /** Tokens per full chunk: two vectors. */
    public static final int CHUNK = 2 * VectorSupport.LANES;

    final float[] values;
    final int cols;
    final int tokens;

    private TokenColumns(float[] values, int cols, int tokens) {
        this.values = values;
        this.cols = cols;
        this.tokens = tokens;
    }

    /**
     * Transposes x[xOffset + t × cols + k] for t in [0, tokens), k in [0, cols). Column by column
     * within a chunk, so each column's lanes are written at once (token by token, every write of a
     * 4864-wide product landed on another cache line: 3–4× slower).
     */
    public static TokenColumns of(float[] x, int xOffset, int cols, int tokens) {
        float[] v = allocate(cols, tokens);
        for (int t0 = 0; t0 < tokens; t0 += CHUNK) {
            int width = chunkWidth(t0, tokens);
            int base = t0 * cols;
            int real = Math.min(width, tokens - t0);
            int src = xOffset + t0 * cols;
            for (int k = 0; k < cols; k++) {
                int dst = base + k * width;
                for (int t = 0; t < real; t++) {
                    v[dst + t] = x[src + t * cols + k];
                }
            }
        }
        return new TokenColumns(v, cols, tokens);
    }

    /**
     * The transposed values scales[t × ⌈cols / block⌉ + k / block] × codes[t × cols + k]: activations
     * quantized per block (int8 codes and one scale per block), rounded back to floats without a
     * row-major copy in between; bitwise {@code of} applied to those products.
     */
    public static TokenColumns ofCodes(byte[] codes, float[] scales, int block, int cols, int tokens) {
        float[] v = allocate(cols, tokens);
        int blocksPerRow = (cols + block - 1) / block;
        for (int t0 = 0; t0 < tokens; t0 += CHUNK) {
            int width = chunkWidth(t0, tokens);
            int base = t0 * cols;
            int real = Math.min(width, tokens - t0);
            for (int k = 0; k < cols; k++) {
                int dst = base + k * width;
                int scale = t0 * blocksPerRow + k / block;
                int code = t0 * cols + k;
                for (int t = 0; t < real; t++) {
                    v[dst + t] = scales[scale + t * blocksPerRow] * codes[code + t * cols];
                }
            }
        }
        return new TokenColumns(v, cols, tokens);
    }

    private static float[] allocate(int cols, int tokens) {
        if (tokens < 1 || cols < 1) {
            throw new IllegalArgumentException("token columns of " + tokens + " tokens × " + cols + " columns");
        }
        int padded = (tokens + VectorSupport.LANES - 1) / VectorSupport.LANES * VectorSupport.LANES;
        return new float[padded * cols];
    }

    /** Width of the chunk starting at token t0: {@link #CHUNK}, or one vector for a short last chunk. */
    static int chunkWidth(int t0, int tokens) {
        return tokens - t0 > VectorSupport.LANES ? CHUNK : VectorSupport.LANES;
    }

    public int cols() {
        return cols;
    }

    public int tokens() {
        return tokens;
    }

    /** Token t's activation of column k (scalar reference access). */
    float at(int t, int k) {
        int t0 = t / CHUNK * CHUNK;
        return values[t0 * cols + k * chunkWidth(t0, tokens) + (t - t0)];
    }
}
