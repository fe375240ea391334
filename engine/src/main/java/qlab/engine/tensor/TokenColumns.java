package qlab.engine.tensor;

import java.util.function.IntConsumer;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorSpecies;
import qlab.engine.util.WorkerPool;

/**
 * The activations of a batched product, transposed for {@link TokenTile}: tokens become the
 * vector lanes, so a tile multiplies one broadcast weight by a whole vector of tokens.
 *
 * <p>The tokens are split into chunks of {@link #CHUNK} tokens (the last one {@link VectorSupport#LANES}
 * when fewer remain) and padded with zero columns to a whole vector. Chunk c, starting at token
 * t0 and w tokens wide, holds its values column by column: token t's activation of column k is at
 * {@code t0 × cols + k × w + (t − t0)}, so a tile walks each chunk's memory in order. Built once
 * per product (its chunks shared by the pool's threads where one is given) and read by every worker.
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
     * Transposes x[xOffset + t × cols + k] for t in [0, tokens), k in [0, cols): per column, each
     * whole vector of tokens in one gather (their values are cols apart), the rest one by one
     * ({@link #ofScalar} everywhere with {@code -Dqlab.vector=false}). Column by column within a
     * chunk, so each column's lanes are written at once (token by token, every write of a
     * 4864-wide product landed on another cache line: 3–4× slower).
     */
    public static TokenColumns of(float[] x, int xOffset, int cols, int tokens) {
        return of(x, xOffset, cols, tokens, null);
    }

    /** {@link #of}, the chunks shared by the pool's threads (one thread if {@code pool} is null). */
    public static TokenColumns of(float[] x, int xOffset, int cols, int tokens, WorkerPool pool) {
        if (!VectorSupport.ENABLED) {
            return ofScalar(x, xOffset, cols, tokens);
        }
        TokenColumns c = new TokenColumns(allocate(cols, tokens), cols, tokens);
        forChunks(tokens, pool, t0 -> c.gather(t0, x, xOffset + t0 * cols));
        return c;
    }

    /** Runs chunk(t0) for the first token t0 of every chunk, over the pool's threads if there is a pool. */
    private static void forChunks(int tokens, WorkerPool pool, IntConsumer chunk) {
        int chunks = (tokens + CHUNK - 1) / CHUNK;
        if (pool == null) {
            for (int c = 0; c < chunks; c++) {
                chunk.accept(c * CHUNK);
            }
        } else {
            pool.forRange(chunks, 1, (s, e) -> {
                for (int c = s; c < e; c++) {
                    chunk.accept(c * CHUNK);
                }
            });
        }
    }

    /** The chunk starting at token t0, transposed from x, where token t0's row starts at x[src]. */
    private void gather(int t0, float[] x, int src) {
        int lanes = VectorSupport.LANES;
        int[] apart = new int[lanes];
        for (int i = 0; i < lanes; i++) {
            apart[i] = i * cols;
        }
        int width = chunkWidth(t0, tokens);
        int base = t0 * cols;
        int real = Math.min(width, tokens - t0);
        int whole = real / lanes * lanes;
        float[] v = values;
        for (int k = 0; k < cols; k++) {
            int dst = base + k * width;
            for (int t = 0; t < whole; t += lanes) {
                FloatVector.fromArray(VectorSupport.F, x, src + t * cols + k, apart, 0).intoArray(v, dst + t);
            }
            for (int t = whole; t < real; t++) {
                v[dst + t] = x[src + t * cols + k];
            }
        }
    }

    /** The scalar reference of {@link #of}: value by value. */
    static TokenColumns ofScalar(float[] x, int xOffset, int cols, int tokens) {
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
     * quantized per block (int8 codes and one scale per block) rounded back to floats row by row,
     * then transposed by {@link #of}; bitwise {@link #ofCodesScalar}.
     */
    public static TokenColumns ofCodes(byte[] codes, float[] scales, int block, int cols, int tokens) {
        return ofCodes(codes, scales, block, cols, tokens, null);
    }

    /** {@link #ofCodes}, the chunks shared by the pool's threads (one thread if {@code pool} is null). */
    public static TokenColumns ofCodes(byte[] codes, float[] scales, int block, int cols, int tokens, WorkerPool pool) {
        if (!VectorSupport.ENABLED) {
            return ofCodesScalar(codes, scales, block, cols, tokens);
        }
        TokenColumns c = new TokenColumns(allocate(cols, tokens), cols, tokens);
        forChunks(tokens, pool, t0 -> {
            int real = Math.min(chunkWidth(t0, tokens), tokens - t0);
            float[] rounded = new float[real * cols];
            for (int t = 0; t < real; t++) {
                roundRow(codes, scales, block, cols, t0 + t, rounded, t * cols);
            }
            c.gather(t0, rounded, 0);
        });
        return c;
    }

    /** Token t's codes times their block scales, into dst[at .. at + cols). */
    private static void roundRow(byte[] codes, float[] scales, int block, int cols, int t, float[] dst, int at) {
        int lanes = VectorSupport.LANES;
        int blocksPerRow = (cols + block - 1) / block;
        int row = t * cols;
        for (int b = 0; b < blocksPerRow; b++) {
            float d = scales[t * blocksPerRow + b];
            int end = Math.min(cols, (b + 1) * block);
            int k = b * block;
            for (; CODES != null && k + lanes <= end; k += lanes) {
                ((FloatVector) ByteVector.fromArray(CODES, codes, row + k).castShape(VectorSupport.F, 0))
                        .mul(d).intoArray(dst, at + k);
            }
            for (; k < end; k++) {
                dst[at + k] = d * codes[row + k];
            }
        }
    }

    /** One byte lane per float lane: the codes of a vector of columns (none for 4 lanes: no 32-bit shape). */
    private static final VectorSpecies<Byte> CODES = VectorSupport.LANES >= 8
            ? VectorSpecies.of(byte.class, VectorShape.forBitSize(8 * VectorSupport.LANES)) : null;

    /** The scalar reference of {@link #ofCodes}: value by value, straight into the transposed layout. */
    static TokenColumns ofCodesScalar(byte[] codes, float[] scales, int block, int cols, int tokens) {
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
