package qlab.quant.kernel;

import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import qlab.quant.Int8Activations;
import qlab.quant.PackedWeights;

/**
 * Kernels for formats decoded into sub-blocks of 16 or 32 values (llama.cpp's k-quants and IQ4):
 * every value's small integer level, and per sub-block an f32 scale and an f32 min, with
 * weight = scale × level − min in f32, bitwise the format's dequantized value. The levels are
 * either a byte copy made at pack time ({@link #copied}: 1.25–1.5 bytes per weight with the
 * scales, whatever the stored bits) or, for q4_k, q5_k and q6_k, read in place from the stored
 * blocks ({@link #q4kInPlace} etc.: 0.81, 0.94 and 1.07 bytes per weight with the f32 scales).
 *
 * <p>f32-activation kernels: each chunk of {@link Lanes#COUNT} levels is widened to floats,
 * turned into the exact weights by one multiply and one subtract, and accumulated with one FMA
 * per lane; lanes are summed in index order and the values past the last whole chunk are added
 * by scalar code. The batched kernels run the same operations per token.
 *
 * <p>int8-activation kernels (activations in blocks of {@link #ACTIVATION_BLOCK}): per scale
 * sub-block (16 or 32 values) the exact integer sums Σ level × code and Σ code, then, sub-block
 * after sub-block, in float, y += Σ level·code × (scale × activation scale), and for the formats
 * with mins y −= min × (activation scale × Σ code): the fold of {@link BlockCodeWeights}, so
 * {@link #dotInt8Rows} runs the same {@link Int8Strips} (rows in the lanes of a repacked copy:
 * nibbles for q4_k, 5-bit codes for q5_k, 6-bit codes for q6_k, bytes for the others),
 * which give the reference's bits. The single-row vector kernel forms the integer sums with int
 * lanes and does the float steps in the reference's order. Measured reason for the strips: the
 * row-at-a-time kernel (a lane reduction and double arithmetic per 16 values) decoded Q4_K_M
 * with int8 activations at about half its f32-activation speed.
 */
public abstract sealed class SubBlockWeights extends PackedWeights {
    private static final int SUB = 16;
    /** Values per activation scale on the int8 path. */
    public static final int ACTIVATION_BLOCK = 32;

    /** Values per row the scales cover (cols padded to the format's block). */
    final int stride;
    private final int subShift;
    /** Values per scale: 16 or 32. */
    private final int sub;
    private final float[] scales;  // [rows, stride >> subShift]
    private final float[] mins;    // [rows, stride >> subShift], or null: every min 0
    private final int vectorEnd;
    /** The whole strips repacked for {@link #dotInt8Rows}; built by {@link #prepareInt8Rows}. */
    private volatile Int8Strips strips;

    /**
     * @param stride values per row the scales cover (cols padded to the format's block)
     * @param sub values per scale: 16 or 32
     * @param scales rows × stride / sub effective scales
     * @param mins rows × stride / sub effective mins, or null for a format without mins (all 0)
     */
    private SubBlockWeights(int rows, int cols, int stride, int sub, float[] scales, float[] mins) {
        super(rows, cols);
        if ((sub != 16 && sub != 32) || stride % sub != 0 || stride < cols) {
            throw new IllegalArgumentException("stride " + stride + " must be a multiple of " + sub + " and hold " + cols + " columns");
        }
        if (scales.length != rows * (stride / sub) || mins != null && mins.length != scales.length) {
            throw new IllegalArgumentException("scales and mins do not match " + rows + " rows of " + stride + " in " + sub + "s");
        }
        this.stride = stride;
        this.subShift = Integer.numberOfTrailingZeros(sub);
        this.sub = sub;
        this.scales = scales;
        this.mins = mins;
        this.vectorEnd = cols & -Lanes.COUNT;
    }

    /**
     * Levels copied at pack time, one byte each: {@code rows × stride} bytes, so a pass reads 1 byte
     * per weight plus the scales whatever the stored bits.
     *
     * @param levels rows × stride levels
     * @param scales rows × stride / 16 effective scales
     */
    public static SubBlockWeights copied(int rows, int cols, int stride, byte[] levels, float[] scales, float[] mins) {
        return new Copied(rows, cols, stride, levels, scales, mins);
    }

    /**
     * q4_k's levels read in place from its stored blocks (nibbles, 0.5 byte per weight), with its
     * per-32 scales and mins decoded at pack time.
     *
     * @param data the rows of ggml Q4_K blocks, {@code rowBytes} each
     * @param scales rows × stride / 32 effective scales
     */
    public static SubBlockWeights q4kInPlace(java.lang.foreign.MemorySegment data, long rowBytes, int rows, int cols,
                                              int stride, float[] scales, float[] mins) {
        return new Q4KInPlace(data, rowBytes, rows, cols, stride, scales, mins);
    }

    /**
     * q5_k's levels read in place from its stored blocks (nibbles and a bit plane, 0.6875 byte per
     * weight), with its per-32 scales and mins decoded at pack time.
     */
    public static SubBlockWeights q5kInPlace(java.lang.foreign.MemorySegment data, long rowBytes, int rows, int cols,
                                              int stride, float[] scales, float[] mins) {
        return new Q5KInPlace(data, rowBytes, rows, cols, stride, scales, mins);
    }

    /**
     * q6_k's levels read in place from its stored blocks (nibbles and bit pairs, 0.8125 byte per
     * weight with its int8 scales and d), with its per-16 scales decoded at pack time.
     */
    public static SubBlockWeights q6kInPlace(java.lang.foreign.MemorySegment data, long rowBytes, int rows, int cols,
                                              int stride, float[] scales) {
        return new Q6KInPlace(data, rowBytes, rows, cols, stride, scales);
    }

    /** Bytes of levels one pass reads. */
    abstract long levelBytes();

    /** Level of value j of a row. */
    abstract int level(int row, int j);

    /** Levels of values j .. j + {@link Lanes#COUNT} − 1 of a row (j a multiple of the lane count), one per byte lane. */
    abstract ByteVector chunk(int row, int j);

    /** Bits per level in the int8 strips: 8 (bytes, any level in [−128, 127]), 6 (levels in [−32, 31]), 5 or 4 (see {@link Int8Strips}). */
    int int8StripBits() {
        return 8;
    }

    /** What the strips take off the levels so they fit their codes (16 for 0..31, 8 for 0..15). */
    int int8LevelBias() {
        return 0;
    }

    /**
     * The scales' (and minima's) factors per 256 values, with which the strips store each
     * sub-block's scale as a byte (see {@link Int8Strips.Factors}); null: the scales as floats.
     */
    Int8Strips.Factors int8Factors() {
        return null;
    }

    /** Levels as bytes, copied at pack time. */
    static final class Copied extends SubBlockWeights {
        private final byte[] levels; // [rows, stride]

        Copied(int rows, int cols, int stride, byte[] levels, float[] scales, float[] mins) {
            super(rows, cols, stride, SUB, scales, mins);
            if (levels.length != (long) rows * stride) {
                throw new IllegalArgumentException("levels do not match " + rows + " rows of " + stride);
            }
            this.levels = levels;
        }

        @Override
        long levelBytes() {
            return (long) rows * stride;
        }

        @Override
        int level(int row, int j) {
            return levels[row * stride + j];
        }

        @Override
        ByteVector chunk(int row, int j) {
            return ByteVector.fromArray(Lanes.BYTES, levels, row * stride + j);
        }
    }

    /** Levels read in place from a ggml type's stored blocks, {@code blockBytes} per 256 values. */
    abstract static sealed class InBlocks extends SubBlockWeights {
        final java.lang.foreign.MemorySegment data;
        private final long rowBytes;
        private final int blockBytes;

        InBlocks(java.lang.foreign.MemorySegment data, long rowBytes, int blockBytes, int rows, int cols, int stride,
                 int sub, float[] scales, float[] mins) {
            super(rows, cols, stride, sub, scales, mins);
            this.data = data;
            this.rowBytes = rowBytes;
            this.blockBytes = blockBytes;
        }

        /** Where the block holding value j of a row starts. */
        final long blockOf(int row, int j) {
            return row * rowBytes + (long) (j >>> 8) * blockBytes;
        }

        @Override
        final long levelBytes() {
            return (long) rows * stride / 256 * blockBytes;
        }

        /** The fp16 value at byte {@code offset} of every block, [rows, stride / 256], negated if asked. */
        final float[] blockHalves(int offset, boolean negate) {
            int blocks = stride / 256;
            float[] f = new float[rows * blocks];
            for (int r = 0; r < rows; r++) {
                for (int b = 0; b < blocks; b++) {
                    float v = Float.float16ToFloat(data.get(HALF_LE, r * rowBytes + (long) b * blockBytes + offset));
                    f[r * blocks + b] = negate ? -v : v;
                }
            }
            return f;
        }
    }

    private static final java.lang.foreign.ValueLayout.OfShort HALF_LE =
            java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN);

    /**
     * Q4_K blocks read in place: in a 144-byte block, value 64c + l (l < 32) is the low nibble of
     * byte 16 + 32c + l, value 64c + 32 + l its high nibble.
     */
    static final class Q4KInPlace extends InBlocks {
        Q4KInPlace(java.lang.foreign.MemorySegment data, long rowBytes, int rows, int cols, int stride, float[] scales,
                   float[] mins) {
            super(data, rowBytes, 144, rows, cols, stride, 32, scales, mins);
        }

        private long byteOf(int row, int j) {
            int i = j & 255;
            return blockOf(row, j) + 16 + 32 * (i >>> 6) + (i & 31);
        }

        @Override
        int level(int row, int j) {
            int b = u8(data, byteOf(row, j));
            return (j & 32) == 0 ? b & 0xF : b >>> 4;
        }

        @Override
        ByteVector chunk(int row, int j) {
            return nibbles(data, byteOf(row, j), (j & 32) != 0);
        }

        @Override
        int int8StripBits() {
            return 4;
        }

        @Override
        int int8LevelBias() {
            return 8;
        }

        /** d × sc and dmin × m (the strips add the negated minima): d at byte 0 of a block, dmin at byte 2. */
        @Override
        Int8Strips.Factors int8Factors() {
            return new Int8Strips.Factors(8, blockHalves(0, false), blockHalves(2, true));
        }
    }

    /** The low nibble (value j & 32 == 0) or the high nibble of the bytes at {@code at}, one per lane. */
    private static ByteVector nibbles(java.lang.foreign.MemorySegment data, long at, boolean high) {
        ByteVector b = ByteVector.fromMemorySegment(Lanes.BYTES, data, at, java.nio.ByteOrder.LITTLE_ENDIAN);
        return high ? b.lanewise(VectorOperators.LSHR, 4) : b.and((byte) 0xF);
    }

    private static int u8(java.lang.foreign.MemorySegment data, long at) {
        return data.get(java.lang.foreign.ValueLayout.JAVA_BYTE, at) & 0xFF;
    }

    /**
     * Q5_K blocks read in place: in a 176-byte block, value 64c + 32t + l (l < 32) has its low four
     * bits in nibble t of byte 48 + 32c + l and its fifth in bit 2c + t of byte 16 + l.
     */
    static final class Q5KInPlace extends InBlocks {
        Q5KInPlace(java.lang.foreign.MemorySegment data, long rowBytes, int rows, int cols, int stride, float[] scales,
                   float[] mins) {
            super(data, rowBytes, 176, rows, cols, stride, 32, scales, mins);
        }

        @Override
        int level(int row, int j) {
            int i = j & 255;
            long block = blockOf(row, j);
            int b = u8(data, block + 48 + 32 * (i >>> 6) + (i & 31));
            int low = (i & 32) == 0 ? b & 0xF : b >>> 4;
            return low | ((u8(data, block + 16 + (i & 31)) >>> (i >>> 5) & 1) << 4);
        }

        @Override
        ByteVector chunk(int row, int j) {
            int i = j & 255;
            long block = blockOf(row, j);
            ByteVector low = nibbles(data, block + 48 + 32 * (i >>> 6) + (i & 31), (i & 32) != 0);
            ByteVector high = ByteVector.fromMemorySegment(Lanes.BYTES, data, block + 16 + (i & 31), java.nio.ByteOrder.LITTLE_ENDIAN)
                    .lanewise(VectorOperators.LSHR, i >>> 5).and((byte) 1).lanewise(VectorOperators.LSHL, 4);
            return low.or(high);
        }

        @Override
        int int8StripBits() {
            return 5;
        }

        @Override
        int int8LevelBias() {
            return 16;
        }

        /** d × sc and dmin × m (the strips add the negated minima): d at byte 0 of a block, dmin at byte 2. */
        @Override
        Int8Strips.Factors int8Factors() {
            return new Int8Strips.Factors(8, blockHalves(0, false), blockHalves(2, true));
        }
    }

    /**
     * Q6_K blocks read in place: in a 210-byte block, value 128h + 32k + l (l < 32) has its low four
     * bits in nibble k / 2 of byte 64h + 32(k % 2) + l, its high two in bits 2k of byte 128 + 32h + l;
     * level = that − 32.
     */
    static final class Q6KInPlace extends InBlocks {
        Q6KInPlace(java.lang.foreign.MemorySegment data, long rowBytes, int rows, int cols, int stride, float[] scales) {
            super(data, rowBytes, 210, rows, cols, stride, SUB, scales, null);
        }

        @Override
        int level(int row, int j) {
            int i = j & 255;
            int h = i >>> 7;
            int k = (i >>> 5) & 3;
            int l = i & 31;
            long block = blockOf(row, j);
            int b = u8(data, block + 64 * h + 32 * (k & 1) + l);
            int low = k < 2 ? b & 0xF : b >>> 4;
            return (low | ((u8(data, block + 128 + 32 * h + l) >>> (2 * k) & 3) << 4)) - 32;
        }

        @Override
        ByteVector chunk(int row, int j) {
            int i = j & 255;
            int h = i >>> 7;
            int k = (i >>> 5) & 3;
            int l = i & 31;
            long block = blockOf(row, j);
            ByteVector low = nibbles(data, block + 64 * h + 32 * (k & 1) + l, k >= 2);
            ByteVector high = ByteVector.fromMemorySegment(Lanes.BYTES, data, block + 128 + 32 * h + l, java.nio.ByteOrder.LITTLE_ENDIAN)
                    .lanewise(VectorOperators.LSHR, 2 * k).and((byte) 3).lanewise(VectorOperators.LSHL, 4);
            return low.or(high).sub((byte) 32);
        }

        /** Levels in −32..31: 6-bit codes in the strips, 6.6 bits per weight with the byte scales, where bytes take 8.6. */
        @Override
        int int8StripBits() {
            return 6;
        }

        /** d × sc: d at byte 208 of a block, one per 16 sub-blocks of 16. */
        @Override
        Int8Strips.Factors int8Factors() {
            return new Int8Strips.Factors(16, blockHalves(208, false), null);
        }
    }

    @Override
    public long kernelBytes() {
        return levelBytes() + (mins == null ? 4L : 8L) * scales.length;
    }

    @Override
    public boolean tilesBatches() {
        return true;
    }

    /** The min of sub-block s; 0 (subtracting it changes no bits) for formats without mins. */
    private float min(int s) {
        return mins == null ? 0f : mins[s];
    }

    private int scaleIndex(int row, int j) {
        return row * (stride >> subShift) + (j >> subShift);
    }

    private float weight(int row, int j) {
        int s = scaleIndex(row, j);
        return scales[s] * level(row, j) - min(s);
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
        int j = 0;
        for (; j < vectorEnd; j += Lanes.COUNT) {
            int s = scaleIndex(row, j);
            weights(row, j, scales[s], min(s)).intoArray(dst, dstOffset + j);
        }
        for (; j < cols; j++) {
            dst[dstOffset + j] = weight(row, j);
        }
    }

    /** The exact weights of the chunk at value j of a row, one per lane: scale × level − min. */
    private FloatVector weights(int row, int j, float scale, float min) {
        FloatVector level = (FloatVector) chunk(row, j).castShape(Lanes.FLOATS, 0);
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
        FloatVector acc = FloatVector.zero(Lanes.FLOATS);
        int j = 0;
        for (; j < vectorEnd; j += Lanes.COUNT) {
            int s = scaleIndex(row, j);
            acc = weights(row, j, scales[s], min(s)).fma(FloatVector.fromArray(Lanes.FLOATS, x, xOffset + j), acc);
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
        int t = 0;
        for (; t + 2 <= tokens; t += 2) {
            int x0 = xOffset + t * cols;
            int x1 = x0 + cols;
            FloatVector acc0 = FloatVector.zero(Lanes.FLOATS);
            FloatVector acc1 = acc0;
            int j = 0;
            for (; j < vectorEnd; j += Lanes.COUNT) {
                int s = scaleIndex(row, j);
                FloatVector w = weights(row, j, scales[s], min(s));
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
        float sum = 0;
        for (int j0 = 0; j0 < cols; j0 += sub) {
            int isum = 0;
            int csum = 0;
            for (int j = j0, end = Math.min(cols, j0 + sub); j < end; j++) {
                isum += level(row, j) * codes[xc + j];
                csum += codes[xc + j];
            }
            sum = step(sum, row, a, token, j0, isum, csum);
        }
        return sum;
    }

    /**
     * One sub-block's floating-point steps, the same in every int8 kernel and in {@link
     * Int8Strips}: sum += Σ level·code × (scale × activation scale), then, with mins, sum −= min ×
     * (activation scale × Σ code).
     */
    private float step(float sum, int row, Int8Activations a, int token, int j0, int isum, int csum) {
        int s = scaleIndex(row, j0);
        float as = a.scales()[token * a.blocksPerRow() + j0 / ACTIVATION_BLOCK];
        sum += isum * (scales[s] * as);
        return mins == null ? sum : sum - mins[s] * (as * csum);
    }

    @Override
    public float dotInt8Vector(int row, Int8Activations a, int token) {
        checkActivations(a);
        return dotInt8Vector(row, a, token, codeSums(a, token));
    }

    /** Σ code of every sub-block of a token's activation codes (the last one may be partial). */
    private int[] codeSums(Int8Activations a, int token) {
        byte[] codes = a.codes();
        int xc = token * cols;
        int[] sums = new int[(cols + sub - 1) / sub];
        for (int j = 0; j < cols; j++) {
            sums[j >> subShift] += codes[xc + j];
        }
        return sums;
    }

    /** {@link #dotInt8Vector} with the token's code sums per sub-block given. */
    private float dotInt8Vector(int row, Int8Activations a, int token, int[] codeSums) {
        byte[] codes = a.codes();
        int xc = token * cols;
        int wholeSubBlocks = cols & -sub;
        float sum = 0;
        int j0 = 0;
        for (; j0 < wholeSubBlocks; j0 += sub) {
            IntVector products = IntVector.zero(Lanes.INTS);
            for (int j = j0; j < j0 + sub; j += Lanes.COUNT) {
                IntVector q = (IntVector) ByteVector.fromArray(Lanes.BYTES, codes, xc + j).castShape(Lanes.INTS, 0);
                IntVector l = (IntVector) chunk(row, j).castShape(Lanes.INTS, 0);
                products = l.mul(q).add(products);
            }
            sum = step(sum, row, a, token, j0, products.reduceLanes(VectorOperators.ADD), codeSums[j0 >> subShift]);
        }
        if (j0 < cols) {
            int isum = 0;
            for (int j = j0; j < cols; j++) {
                isum += level(row, j) * codes[xc + j];
            }
            sum = step(sum, row, a, token, j0, isum, codeSums[j0 >> subShift]);
        }
        return sum;
    }

    @Override
    public void dotInt8BatchVector(int row, Int8Activations a, float[] y, int yOffset, int yStride) {
        for (int t = 0; t < a.tokens(); t++) {
            y[yOffset + t * yStride] = dotInt8Vector(row, a, t);
        }
    }

    @Override
    public void prepareInt8Rows() {
        if (BlockCodeWeights.repacksInt8Rows(rows) && strips == null) {
            synchronized (this) {
                if (strips == null) {
                    float[] negatedMins = null;
                    if (mins != null) {
                        negatedMins = new float[mins.length];
                        for (int i = 0; i < mins.length; i++) {
                            negatedMins[i] = -mins[i];
                        }
                    }
                    strips = new Int8Strips(rows / Int8Strips.ROWS, cols, ACTIVATION_BLOCK, sub, stride >> subShift,
                            int8StripBits(), int8LevelBias(), this::levelsOfRow, scales, negatedMins, int8Factors());
                }
            }
        }
    }

    private void levelsOfRow(int row, float[] dst) {
        for (int j = 0; j < cols; j++) {
            dst[j] = level(row, j);
        }
    }

    @Override
    public long int8KernelBytes() {
        Int8Strips st = strips;
        return st == null ? kernelBytes() : st.bytesWithRest(rows, kernelBytes() / rows);
    }

    /** The int8 strips' kernel ({@link Int8Strips#kernel}); "none" before {@link #prepareInt8Rows} or without strips. */
    String int8Kernel() {
        Int8Strips st = strips;
        return st == null ? "none" : st.kernel();
    }

    /** Rows the int8 row kernel takes from {@link Int8Strips}; 0 before {@link #prepareInt8Rows}. */
    public int int8StripRows() {
        Int8Strips st = strips;
        return st == null ? 0 : st.strips() * Int8Strips.ROWS;
    }

    /**
     * Every whole strip of {@link Int8Strips#ROWS} rows through {@link Int8Strips}, the rows after
     * the last strip by {@link #dotInt8Vector} (the tokens' code sums computed once per call): the
     * reference's bits either way.
     */
    @Override
    public void dotInt8Rows(int rowStart, int rowEnd, Int8Strips.Activations x, float[] y, int yOffset, int yStride) {
        Int8Activations a = x.codes();
        checkActivations(a);
        if (!PackedWeights.VECTOR_ENABLED) {
            super.dotInt8Rows(rowStart, rowEnd, x, y, yOffset, yStride);
            return;
        }
        Int8Strips st = strips;
        int inStrips = st == null ? rowStart : Math.max(rowStart, Math.min(rowEnd, st.strips() * Int8Strips.ROWS));
        if (rowStart < inStrips) {
            st.rows(rowStart, inStrips, x, y, yOffset, yStride);
        }
        if (inStrips == rowEnd) {
            return;
        }
        int[][] codeSums = new int[a.tokens()][];
        for (int t = 0; t < a.tokens(); t++) {
            codeSums[t] = codeSums(a, t);
        }
        for (int r = inStrips; r < rowEnd; r++) {
            for (int t = 0; t < a.tokens(); t++) {
                y[yOffset + r + t * yStride] = dotInt8Vector(r, a, t, codeSums[t]);
            }
        }
    }
}
