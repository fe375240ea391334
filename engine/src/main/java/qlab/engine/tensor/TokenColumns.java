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

    /** Transposes x[xOffset + t × cols + k] for t in [0, tokens), k in [0, cols). */
    public static TokenColumns of(float[] x, int xOffset, int cols, int tokens) {
        if (tokens < 1 || cols < 1) {
            throw new IllegalArgumentException("token columns of " + tokens + " tokens × " + cols + " columns");
        }
        int padded = (tokens + VectorSupport.LANES - 1) / VectorSupport.LANES * VectorSupport.LANES;
        float[] v = new float[padded * cols];
        for (int t0 = 0; t0 < tokens; t0 += CHUNK) {
            int width = chunkWidth(t0, tokens);
            int base = t0 * cols;
            int real = Math.min(width, tokens - t0);
            for (int t = 0; t < real; t++) {
                int src = xOffset + (t0 + t) * cols;
                for (int k = 0; k < cols; k++) {
                    v[base + k * width + t] = x[src + k];
                }
            }
        }
        return new TokenColumns(v, cols, tokens);
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
