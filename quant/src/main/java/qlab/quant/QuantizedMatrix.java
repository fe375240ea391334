package qlab.quant;

import java.lang.foreign.MemorySegment;
import qlab.engine.QlabException;
import qlab.engine.tensor.Matrix;
import qlab.engine.tensor.TokenColumns;
import qlab.engine.tensor.TokenTile;
import qlab.engine.util.HugePages;
import qlab.engine.util.WorkerPool;
import qlab.quant.kernel.BlockCodeWeights;
import qlab.quant.kernel.Int8Strips;

/**
 * A weight matrix [rows, cols] in any registered format, multiplied by its format's kernels.
 * Decode (tokens == 1) uses the single-row kernel, prefill and batched decode the batched one
 * (from {@link #TILED_FROM_TOKENS} tokens on, the dequantized-tile kernel; see
 * {@link #BATCHED_PROPERTY}).
 *
 * <p>Activations: integer formats can take them as f32 or quantized to int8 once per product in
 * {@link #prepare}. The default is f32 ({@code -Dqlab.quant.activations=int8}, or the constructor
 * argument, changes it). With int8 activations every product, of any number of tokens, runs
 * {@link PackedWeights#dotInt8Rows}: for block formats {@link Int8Strips}, rows in the lanes of a
 * repacked copy built here. MatVecBenchmark, 4864×896, one thread, hot, f32 vs int8 activations:
 * q4_0 6.8 vs 14.7 G multiply-adds/s, q8_0 7.7 vs 10.2 (docs/performance.md for the whole model).
 *
 * <p>Weights live in a {@link MemorySegment}: off-heap (or memory-mapped) segments, not
 * {@code byte[]}-backed ones, because f32 vector loads from a heap byte array measured ~15× slower.
 */
public final class QuantizedMatrix implements Matrix {
    public static final String ACTIVATIONS_PROPERTY = "qlab.quant.activations";
    /**
     * Batched products (f32 activations): {@code auto} (the default) runs the exact block kernels,
     * whose results are bitwise those of single-token decode, below {@link #TILED_FROM_TOKENS}
     * tokens (batched decode of a few sequences) and the dequantized-tile kernel from there on
     * (prefill, batched decode of more sequences);
     * {@code tiled} runs the tile for every batch, {@code exact} never, a number N from N tokens on.
     */
    public static final String BATCHED_PROPERTY = "qlab.quant.batched";
    /**
     * Where the tile starts to pay for dequantizing its rows and padding the tokens to whole
     * vectors: measured from 8 tokens on at 8 and 16 lanes (docs/engine.md, "Batched decode"), so
     * the threshold is 8 tokens
     * ({@link #BATCHED_PROPERTY} = N moves it, to measure another CPU).
     */
    public static final int TILED_FROM_TOKENS = 8;
    private static final int TILED_FROM = tiledFrom();

    private final QuantFormat format;
    private final MemorySegment data;
    private final PackedWeights weights;
    private final boolean int8Activations;
    private final int tiledFrom;
    /** With int8 activations: prompts of this many tokens or more run the tile on the int8-rounded activations. */
    private final int int8PromptTiledFrom;

    /** Over stored rows in {@code data} (e.g. a memory-mapped file slice), activation path from the property. */
    public QuantizedMatrix(QuantFormat format, MemorySegment data, int rows, int cols) {
        this(format, data, rows, cols, defaultInt8Activations());
    }

    /**
     * @param int8Activations use the int8-activation kernels (ignored for float formats)
     */
    public QuantizedMatrix(QuantFormat format, MemorySegment data, int rows, int cols, boolean int8Activations) {
        this(format, data, rows, cols, int8Activations, TILED_FROM);
    }

    /**
     * @param int8Activations use the int8-activation kernels (ignored for float formats)
     * @param tiledFrom       batched products of this many tokens or more go through the
     *                        dequantized-tile kernel where the format has it (2: all; {@link
     *                        Integer#MAX_VALUE}: none)
     */
    public QuantizedMatrix(QuantFormat format, MemorySegment data, int rows, int cols, boolean int8Activations,
                           int tiledFrom) {
        if (rows <= 0 || cols <= 0) {
            throw new QlabException("quantized matrix: shape [" + rows + ", " + cols + "] must be positive");
        }
        long need = rows * format.bytesPerRow(cols);
        if (data.byteSize() < need) {
            throw new QlabException("quantized matrix: data holds " + data.byteSize() + " bytes, " + format.label()
                    + " [" + rows + ", " + cols + "] needs " + need);
        }
        this.format = format;
        this.data = data.asSlice(0, need);
        this.weights = format.pack(this.data, rows, cols);
        this.int8Activations = int8Activations && weights.hasInt8Path();
        if (this.int8Activations) {
            weights.prepareInt8Rows();
        }
        this.tiledFrom = weights.tilesBatches() && !this.int8Activations ? Math.max(2, tiledFrom) : Integer.MAX_VALUE;
        this.int8PromptTiledFrom = weights.tilesBatches() && this.int8Activations ? Math.max(2, tiledFrom) : Integer.MAX_VALUE;
    }

    private static int tiledFrom() {
        return tiledFrom(System.getProperty(BATCHED_PROPERTY, "auto"));
    }

    /** The tile threshold a {@link #BATCHED_PROPERTY} value names. */
    static int tiledFrom(String v) {
        return switch (v) {
            case "auto" -> TILED_FROM_TOKENS;
            case "tiled" -> 2;
            case "exact" -> Integer.MAX_VALUE;
            default -> {
                if (v.matches("[1-9][0-9]{0,8}")) {
                    yield Integer.parseInt(v);
                }
                throw new QlabException("system property " + BATCHED_PROPERTY + " is \"" + v
                        + "\"; valid values: auto, tiled, exact, or the number of tokens from which to tile");
            }
        };
    }

    /** The activation path -Dqlab.quant.activations chooses: f32 (the default) or int8. */
    public static boolean defaultInt8Activations() {
        String v = System.getProperty(ACTIVATIONS_PROPERTY, "f32");
        return switch (v) {
            case "f32" -> false;
            case "int8" -> true;
            default -> throw new QlabException("system property " + ACTIVATIONS_PROPERTY + " is \"" + v
                    + "\"; valid values: f32, int8");
        };
    }

    /**
     * Quantizes row-major f32 weights [rows, cols] into {@code format}, rows in parallel on the pool.
     *
     * @param importance per input channel weights float[cols] for the importance-weighted quantizer, or null
     */
    public static QuantizedMatrix quantize(QuantFormat format, float[] weights, int rows, int cols, float[] importance,
                                           WorkerPool pool) {
        if ((long) rows * cols != weights.length) {
            throw new QlabException("quantize: " + weights.length + " weights do not make a [" + rows + ", " + cols + "] matrix");
        }
        if (importance != null && importance.length != cols) {
            throw new QlabException("quantize: importance has " + importance.length + " entries, the matrix has " + cols + " columns");
        }
        if (importance != null) {
            for (int j = 0; j < cols; j++) {
                if (!(importance[j] >= 0) || Float.isInfinite(importance[j])) {
                    throw new QlabException("quantize: importance of column " + j + " is " + importance[j]
                            + "; importance weights must be finite and non-negative");
                }
            }
        }
        for (int i = 0; i < weights.length; i++) {
            if (!Float.isFinite(weights[i])) {
                throw new QlabException("quantize: weight [" + i / cols + ", " + i % cols + "] is " + weights[i]
                        + "; only finite weights can be quantized");
            }
        }
        long rowBytes = format.bytesPerRow(cols);
        // Off-heap and 64-byte aligned, like a memory-mapped tensor; no 2 GiB array limit; 2 MiB pages where available.
        MemorySegment data = HugePages.allocate(rows * rowBytes);
        pool.forRange(rows, 16, (start, end) -> {
            for (int r = start; r < end; r++) {
                format.quantizeRow(weights, r * cols, cols, importance, data, r * rowBytes);
            }
        });
        return new QuantizedMatrix(format, data, rows, cols);
    }

    /**
     * Whether a matrix of this format and height, built with these activations, multiplies from a
     * repacked copy of its codes (the int8 strips, built at construction) rather than from the
     * segment it is given: then that segment is read once, at construction, and where it lives does
     * not matter for speed. The ggml block formats that decode their levels into a copy always do.
     */
    public static boolean readsRepackedCopy(QuantFormat format, int rows, boolean int8Activations) {
        return format instanceof qlab.quant.format.SuperBlockFormat sb && sb.packsCopy()
                || int8Activations && format.isInteger() && BlockCodeWeights.repacksInt8Rows(rows);
    }

    public QuantFormat quantFormat() {
        return format;
    }

    /** The kernels' view (codes in place, scales widened). */
    public PackedWeights weights() {
        return weights;
    }

    /** The stored rows. */
    public MemorySegment data() {
        return data;
    }

    public boolean usesInt8Activations() {
        return int8Activations;
    }

    /**
     * Whether a batched product of {@code tokens} tokens runs {@link PackedWeights#dotBatchRowsTiled}
     * (else the block kernels, bitwise equal to single-token decode).
     */
    public boolean tiles(int tokens) {
        return tiles(tokens, false);
    }

    /**
     * {@link #tiles(int)} for a prompt or not ({@link Matrix#prepare(float[], int, boolean)}): with
     * int8 activations a prompt of {@link #TILED_FROM_TOKENS} tokens or more runs the tile on the
     * activations rounded to their int8 codes, a batch of sequences runs the int8 strips.
     */
    public boolean tiles(int tokens, boolean prompt) {
        return tokens >= (prompt && int8Activations ? int8PromptTiledFrom : tiledFrom);
    }

    /** Storage bytes: rows × bytesPerRow, as in a quantized file. */
    public long storageBytes() {
        return data.byteSize();
    }

    @Override
    public int rows() {
        return weights.rows();
    }

    @Override
    public int cols() {
        return weights.cols();
    }

    /**
     * Bytes one full product reads: the codes plus the f32-widened scales, which for block formats
     * is a little more than {@link #storageBytes()} (e.g. q8_0: 9 bits per weight read, 8.5 stored);
     * with int8 activations, the strips the int8 kernel streams instead (2- and 1-bit levels take
     * a nibble there, so those formats read about as much as the 4-bit ones).
     */
    @Override
    public long byteSize() {
        return int8Activations ? weights.int8KernelBytes() : weights.kernelBytes();
    }

    @Override
    public String format() {
        return format.label();
    }

    @Override
    public Object prepare(float[] x, int tokens) {
        return prepare(x, tokens, false);
    }

    /**
     * With int8 activations a prompt from {@link #TILED_FROM_TOKENS} tokens on is multiplied by
     * the dequantized tile, as with f32 activations, on the activations each rounded to its int8
     * code (code × block scale): the same product as the strips' integer sums, in float arithmetic,
     * so within rounding of them. The strips multiply each repacked weight once per token; the
     * tile, once per vector of tokens: q4_0, 2 threads, 64-token prompt, {@code bench --reps 5},
     * four alternating pairs, strips vs tile, prefill 69.0/68.9/74.0/69.7 vs 164.7/165.1/163.2/165.6
     * tok/s, decode (strips in both) 44.4/43.6/47.8/44.1 vs 48.2/47.9/46.7/45.6. Batches of
     * sequences keep the strips, so lock-step decode stays bitwise single-stream decode (one
     * sequence's float round-off would otherwise move an activation across a code boundary).
     */
    @Override
    public Object prepare(float[] x, int tokens, boolean prompt) {
        return prepare(x, tokens, prompt, null);
    }

    /** The activations are quantized or transposed by the pool's threads (one thread without a pool). */
    @Override
    public Object prepare(float[] x, int tokens, boolean prompt, WorkerPool pool) {
        if (int8Activations) {
            if (prompt && tokens >= int8PromptTiledFrom) {
                Int8Activations a = Int8Activations.quantize(x, 0, cols(), tokens, weights.activationBlock(), pool);
                return new RoundedColumns(TokenColumns.ofCodes(a.codes(), a.scales(), a.block(), cols(), tokens, pool), a.block());
            }
            return new Int8Strips.Activations(Int8Activations.quantize(x, 0, cols(), tokens, weights.activationBlock(), pool));
        }
        return tokens >= tiledFrom ? TokenColumns.of(x, 0, cols(), tokens, pool) : null;
    }

    /** A prompt's activations rounded to their int8 codes in blocks of {@code block}, transposed for the tile. */
    private record RoundedColumns(TokenColumns columns, int block) {}

    /**
     * The sibling's preparation when it is the one this matrix would make: the same activations
     * quantized in the same blocks (whatever the weight format), or the same transposed tokens.
     */
    @Override
    public Object prepareLike(Object sibling, float[] x, int tokens) {
        return prepareLike(sibling, x, tokens, false);
    }

    @Override
    public Object prepareLike(Object sibling, float[] x, int tokens, boolean prompt) {
        return prepareLike(sibling, x, tokens, prompt, null);
    }

    @Override
    public Object prepareLike(Object sibling, float[] x, int tokens, boolean prompt, WorkerPool pool) {
        if (int8Activations && prompt && tokens >= int8PromptTiledFrom) {
            if (sibling instanceof RoundedColumns s && s.block() == weights.activationBlock()
                    && s.columns().cols() == cols() && s.columns().tokens() == tokens) {
                return s;
            }
        } else if (int8Activations) {
            if (sibling instanceof Int8Strips.Activations s && s.codes().cols() == cols()
                    && s.codes().tokens() == tokens && s.codes().block() == weights.activationBlock()) {
                return s;
            }
        } else if (tokens < tiledFrom) {
            return null;
        } else if (sibling instanceof TokenColumns s && s.cols() == cols() && s.tokens() == tokens) {
            return s;
        }
        return prepare(x, tokens, prompt, pool);
    }

    @Override
    public int rowGrain(Object prepared) {
        if (prepared instanceof RoundedColumns rounded) {
            return TokenTile.panelRows(rounded.columns().tokens());
        }
        return prepared instanceof TokenColumns columns ? TokenTile.panelRows(columns.tokens()) : ROW_GRAIN;
    }

    @Override
    public void matmul(float[] x, Object prepared, int tokens, float[] y, int yStride, int yOffset, int rowStart, int rowEnd) {
        if (prepared instanceof RoundedColumns rounded) {
            weights.dotBatchRowsTiled(rowStart, rowEnd, rounded.columns(), y, yOffset, yStride);
        } else if (int8Activations) {
            weights.dotInt8Rows(rowStart, rowEnd, (Int8Strips.Activations) prepared, y, yOffset, yStride);
        } else if (tokens == 1) {
            for (int r = rowStart; r < rowEnd; r++) {
                y[yOffset + r] = weights.dot(r, x, 0);
            }
        } else if (tokens >= tiledFrom) {
            weights.dotBatchRowsTiled(rowStart, rowEnd, (TokenColumns) prepared, y, yOffset, yStride);
        } else {
            weights.dotBatchRows(rowStart, rowEnd, x, 0, tokens, y, yOffset, yStride);
        }
    }

    @Override
    public void copyRow(int row, float[] dst, int dstOffset) {
        weights.dequantizeRow(row, dst, dstOffset);
    }
}
