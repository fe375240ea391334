package qlab.quant.kernel;

import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import qlab.quant.Int8Activations;
import qlab.quant.PackedWeights;

/**
 * Kernels for every integer block format: codes of {@link CodeGrid#bits} bits packed as
 * {@link CodePacking} describes, read in place from the segment, and one f32 scale per block of
 * {@code block} values (widened at load, so the hot loop reads only floats and code bytes).
 *
 * <p>f32-activation vector kernels: {@link GroupKernel}, a 32-value group per step (decode the
 * group's levels, multiply by the activations in a fixed tree, one FMA by the block scale);
 * decode reads one row per pass, prefill two tokens per row pass (larger loop bodies passed C2's
 * inlining limit, see {@link GroupKernel}). Values past the last whole
 * group (or in a partial code unit) are done by scalar code, in the same order everywhere.
 *
 * <p>int8-activation kernels: {@link #dotInt8Rows}, what {@link qlab.quant.QuantizedMatrix} runs,
 * takes the whole strips of {@link Int8Strips#ROWS} rows through {@link Int8Strips} (a repacked copy, rows in the
 * lanes, built by {@link #prepareInt8Rows}) and the rows after the last strip through {@link #dotInt8Scalar}: the
 * same bits either way. The single-row {@link #dotInt8Vector} (codes and activation codes widened
 * to int lanes per chunk of {@link Lanes#COUNT} values, summed per block in int32, one FMA by the
 * product of the two scales) needs no copy but is as slow as the f32 kernels; it stays as the
 * row-at-a-time entry point and is tested within the rounding bound.
 */
public final class BlockCodeWeights extends PackedWeights {

    private final MemorySegment data;
    private final long rowBytes;
    private final long codesOffset;
    private final CodeGrid grid;
    private final int bits;
    private final int step;
    /** Mask of the bits a code unit holds per value (the low 4 of a 5-bit code). */
    private final int codeMask;
    /** 5-bit codes: where a row's plane of fifth bits starts, from the start of its codes. */
    private final long highBits;
    private final int levelOffset;
    private final int unitShift;
    private final int unitMask;
    private final int block;
    private final int blockMask;
    private final int blocksPerRow;
    private final float[] scales; // [rows, blocksPerRow]
    private final float[] mins;   // [rows, blocksPerRow] or null
    /**
     * f32-activation kernels: values [0, vectorEnd) of a row, whole 32-value groups inside full code
     * units, are done by vector code; the rest by scalar code.
     */
    private final int vectorEnd;
    private final GroupKernel kernel;
    /** The int8-activation kernels' vector part: [0, int8VectorEnd), a chunk of lane-count values at a time. */
    private final int int8VectorEnd;
    /** The whole strips repacked for {@link #dotInt8Rows}; built by {@link #prepareInt8Rows}. */
    private volatile Int8Strips strips;

    /**
     * @param data rows stored back to back, {@code rowBytes} each
     * @param codesOffset where the codes start inside a row (after its stored scales)
     * @param scales the effective f32 scale of every block, [rows, ceil(cols / block)]
     */
    public BlockCodeWeights(MemorySegment data, int rows, int cols, long rowBytes, long codesOffset,
                            CodeGrid grid, int block, float[] scales) {
        this(data, rows, cols, rowBytes, codesOffset, grid, block, scales, null);
    }

    /**
     * @param mins the f32 minimum of every block, [rows, ceil(cols / block)], for the affine
     *     formats (value = scale × level + min); null for the others
     */
    public BlockCodeWeights(MemorySegment data, int rows, int cols, long rowBytes, long codesOffset,
                            CodeGrid grid, int block, float[] scales, float[] mins) {
        super(rows, cols);
        if (block < 32 || Integer.bitCount(block) != 1) {
            throw new IllegalArgumentException("block must be a power of two >= 32, got " + block);
        }
        this.data = data;
        this.rowBytes = rowBytes;
        this.codesOffset = codesOffset;
        this.grid = grid;
        this.bits = grid.bits;
        this.step = grid.step;
        this.codeMask = (1 << (grid.bits == 5 ? 4 : grid.bits)) - 1;
        this.highBits = CodePacking.highBitsOffset(cols);
        this.levelOffset = grid.offset;
        // 5-bit codes: their low 4 bits are laid out as 4-bit codes, the fifth bits in a plane after them.
        int unit = CodePacking.unitValues(grid.bits == 5 ? 4 : grid.bits);
        this.unitShift = Integer.numberOfTrailingZeros(unit);
        this.unitMask = unit - 1;
        this.block = block;
        this.blockMask = block - 1;
        this.blocksPerRow = (cols + block - 1) / block;
        if (scales.length != rows * blocksPerRow) {
            throw new IllegalArgumentException("expected " + rows * blocksPerRow + " scales, got " + scales.length);
        }
        this.scales = scales;
        if (mins != null && mins.length != scales.length) {
            throw new IllegalArgumentException("expected " + scales.length + " minima, got " + mins.length);
        }
        this.mins = mins;
        int fullUnitValues = CodePacking.paddedCols(cols) / unit * unit;
        this.vectorEnd = Math.min(cols & -32, fullUnitValues);
        this.kernel = GroupKernel.of(grid, data, rowBytes, codesOffset, highBits, scales, blocksPerRow, block,
                vectorEnd >>> 5, cols);
        this.int8VectorEnd = Math.min(cols & -Lanes.COUNT, fullUnitValues);
    }

    @Override
    public long kernelBytes() {
        return rows * rowKernelBytes();
    }

    /** Codes and f32 scales (and minima) of one row. */
    private long rowKernelBytes() {
        return CodePacking.codeBytes(cols, bits) + (mins == null ? 4L : 8L) * blocksPerRow;
    }

    @Override
    public boolean hasInt8Path() {
        return true;
    }

    @Override
    public int activationBlock() {
        return block;
    }

    private int level(long rowCodes, int j) {
        return grid.levelOf(CodePacking.read(data, rowCodes, j, cols, bits));
    }

    /**
     * Levels of the chunk starting at j (a multiple of the lane count below vectorEnd), one per
     * int lane. The chunk's 16-value field of its unit starts at byte (j & 15): 0, or 8 for the
     * second half of a field with 8 lanes. Bytes are widened to ints before the shift and mask:
     * x86 has no byte shifts (they are emulated), int shifts are single instructions. The widening
     * sign-extends, which leaves bits 0..7 (all the codes occupy) unchanged.
     */
    private IntVector levels(long rowCodes, int j) {
        IntVector v = (IntVector) ByteVector.fromMemorySegment(Lanes.BYTES, data,
                rowCodes + ((long) (j >>> unitShift) << 4) + (j & 15), ByteOrder.LITTLE_ENDIAN).castShape(Lanes.INTS, 0);
        if (bits == 8) {
            return v;
        }
        v = v.lanewise(VectorOperators.LSHR, ((j & unitMask) >>> 4) * (bits == 5 ? 4 : bits)).and(codeMask);
        if (bits == 5) {
            int word = data.get(GroupKernel.I32_LE, rowCodes + highBits + (j >>> 5 << 2));
            v = v.or(GroupKernel.highBits(word, j & 31));
        }
        if (step == 2) {
            v = v.add(v);
        }
        return v.sub(levelOffset);
    }

    /** Weight j of a row: scale × level, plus the block's minimum in the affine formats (two f32 operations). */
    private float weight(long rowCodes, int s, int j) {
        float w = scales[s + j / block] * level(rowCodes, j);
        return mins == null ? w : w + mins[s + j / block];
    }

    @Override
    public void dequantizeRow(int row, float[] dst, int dstOffset) {
        long rowCodes = row * rowBytes + codesOffset;
        int s = row * blocksPerRow;
        for (int j = 0; j < cols; j++) {
            dst[dstOffset + j] = weight(rowCodes, s, j);
        }
    }

    /** {@link #dequantizeRow} with the whole groups done by {@link GroupKernel#dequantize}: the same bits. */
    @Override
    public void dequantizeRowVector(int row, float[] dst, int dstOffset) {
        kernel.dequantize(row, dst, dstOffset);
        long rowCodes = row * rowBytes + codesOffset;
        int s = row * blocksPerRow;
        if (mins != null) {
            for (int j = 0; j < vectorEnd; j += Lanes.COUNT) {
                FloatVector.fromArray(Lanes.FLOATS, dst, dstOffset + j).add(mins[s + j / block])
                        .intoArray(dst, dstOffset + j);
            }
        }
        for (int j = vectorEnd; j < cols; j++) {
            dst[dstOffset + j] = weight(rowCodes, s, j);
        }
    }

    @Override
    public boolean tilesBatches() {
        return true;
    }

    // ---------------------------------------------------------------- f32 activations

    @Override
    public float dotScalar(int row, float[] x, int xOffset) {
        long rowCodes = row * rowBytes + codesOffset;
        int s = row * blocksPerRow;
        float sum = 0;
        for (int j = 0; j < cols; j++) {
            sum += weight(rowCodes, s, j) * x[xOffset + j];
        }
        return sum;
    }

    /** The scalar part of a row: values [vectorEnd, cols), added to sum in column order. */
    private float tail(long rowCodes, int s, float[] x, int xOffset, float sum) {
        for (int j = vectorEnd; j < cols; j++) {
            sum += weight(rowCodes, s, j) * x[xOffset + j];
        }
        return sum;
    }

    /** {@link GroupKernel} over the whole 32-value groups (plus the minima's term), then the scalar tail. */
    @Override
    public float dotVector(int row, float[] x, int xOffset) {
        return tail(row * rowBytes + codesOffset, row * blocksPerRow, x, xOffset,
                withMins(row, x, xOffset, kernel.row(row, x, xOffset)));
    }

    /**
     * The affine formats' offset term over the whole groups added to {@code sum}: Σ per group
     * min × Σ x (the group's activations summed in lanes, one FMA by its block's minimum); {@code
     * sum} itself where the format has no minima.
     */
    private float withMins(int row, float[] x, int xOffset, float sum) {
        if (mins == null) {
            return sum;
        }
        int s = row * blocksPerRow;
        FloatVector acc = FloatVector.zero(Lanes.FLOATS);
        for (int j = 0; j < vectorEnd; j += 32) {
            FloatVector xs = FloatVector.fromArray(Lanes.FLOATS, x, xOffset + j);
            for (int h = Lanes.COUNT; h < 32; h += Lanes.COUNT) {
                xs = xs.add(FloatVector.fromArray(Lanes.FLOATS, x, xOffset + j + h));
            }
            acc = xs.fma(FloatVector.broadcast(Lanes.FLOATS, mins[s + j / block]), acc);
        }
        float minTerm = 0; // Lanes.sumInOrder written out: no vector crosses a call here (GroupKernel)
        for (int i = 0; i < Lanes.COUNT; i++) {
            minTerm += acc.lane(i);
        }
        return sum + minTerm;
    }

    /**
     * Two tokens per pass over the row's levels, decoded once per row into a scratch array (so
     * prefill pays the decode once per row, not per token); per token the bits of {@link #dotVector}.
     */
    @Override
    public void dotBatchVector(int row, float[] x, int xOffset, int tokens, float[] y, int yOffset, int yStride) {
        dotBatchVector(row, x, xOffset, tokens, y, yOffset, yStride, new float[vectorEnd]);
    }

    @Override
    public void dotBatchRowsVector(int rowStart, int rowEnd, float[] x, int xOffset, int tokens, float[] y,
                                   int yOffset, int yStride) {
        float[] levels = new float[vectorEnd];
        for (int r = rowStart; r < rowEnd; r++) {
            dotBatchVector(r, x, xOffset, tokens, y, yOffset + r, yStride, levels);
        }
    }

    private void dotBatchVector(int row, float[] x, int xOffset, int tokens, float[] y, int yOffset, int yStride,
                                float[] levels) {
        long rowCodes = row * rowBytes + codesOffset;
        int s = row * blocksPerRow;
        kernel.levels(row, levels, 0);
        int t = 0;
        for (; t + 2 <= tokens; t += 2) {
            int x0 = xOffset + t * cols;
            int y0 = yOffset + t * yStride;
            kernel.twoFromLevels(row, levels, x, x0, x0 + cols, y, y0, y0 + yStride);
            y[y0] = withMins(row, x, x0, y[y0]);
            y[y0 + yStride] = withMins(row, x, x0 + cols, y[y0 + yStride]);
            if (vectorEnd < cols) {
                y[y0] = tail(rowCodes, s, x, x0, y[y0]);
                y[y0 + yStride] = tail(rowCodes, s, x, x0 + cols, y[y0 + yStride]);
            }
        }
        if (t < tokens) {
            int x0 = xOffset + t * cols;
            y[yOffset + t * yStride] = tail(rowCodes, s, x, x0, withMins(row, x, x0, kernel.oneFromLevels(row, levels, x, x0)));
        }
    }

    // ---------------------------------------------------------------- int8 activations

    private void checkActivations(Int8Activations a) {
        if (a.cols() != cols || a.block() != block) {
            throw new IllegalArgumentException("activations [" + a.cols() + " cols, block " + a.block()
                    + "] do not match weights [" + cols + " cols, block " + block + "]");
        }
    }

    @Override
    public float dotInt8Scalar(int row, Int8Activations a, int token) {
        checkActivations(a);
        long rowCodes = row * rowBytes + codesOffset;
        int s = row * blocksPerRow;
        byte[] codes = a.codes();
        float[] aScales = a.scales();
        int xc = token * cols;
        int xs = token * blocksPerRow;
        float sum = 0;
        for (int b = 0; b < blocksPerRow; b++) {
            int isum = 0;
            int csum = 0;
            for (int j = b * block, end = Math.min(cols, j + block); j < end; j++) {
                isum += level(rowCodes, j) * codes[xc + j];
                csum += codes[xc + j];
            }
            sum += isum * (scales[s + b] * aScales[xs + b]);
            if (mins != null) {
                sum += mins[s + b] * (aScales[xs + b] * csum);
            }
        }
        return sum;
    }

    /**
     * The affine formats' offset term of the int8 product, block by block in order: Σ min ×
     * (activation scale × Σ activation codes); 0 where the format has no minima. The single-row
     * and four-token kernels add it last, in the same way, so they agree bit for bit.
     */
    private float int8Mins(int row, Int8Activations a, int token) {
        if (mins == null) {
            return 0;
        }
        byte[] codes = a.codes();
        float[] aScales = a.scales();
        int s = row * blocksPerRow;
        float sum = 0;
        for (int b = 0; b < blocksPerRow; b++) {
            int csum = 0;
            for (int j = token * cols + b * block, end = token * cols + Math.min(cols, b * block + block); j < end; j++) {
                csum += codes[j];
            }
            sum += mins[s + b] * (aScales[token * blocksPerRow + b] * csum);
        }
        return sum;
    }

    @Override
    public float dotInt8Vector(int row, Int8Activations a, int token) {
        checkActivations(a);
        long rowCodes = row * rowBytes + codesOffset;
        int s = row * blocksPerRow;
        byte[] codes = a.codes();
        float[] aScales = a.scales();
        int xc = token * cols;
        int xs = token * blocksPerRow;
        FloatVector acc = FloatVector.zero(Lanes.FLOATS);
        IntVector partial = IntVector.zero(Lanes.INTS);
        int j = 0;
        for (; j < int8VectorEnd; j += Lanes.COUNT) {
            IntVector q = (IntVector) ByteVector.fromArray(Lanes.BYTES, codes, xc + j).castShape(Lanes.INTS, 0);
            partial = levels(rowCodes, j).mul(q).add(partial);
            if (((j + Lanes.COUNT) & blockMask) == 0 || j + Lanes.COUNT == int8VectorEnd) {
                int b = j / block;
                FloatVector scale = FloatVector.broadcast(Lanes.FLOATS, scales[s + b] * aScales[xs + b]);
                acc = ((FloatVector) partial.convert(VectorOperators.I2F, 0)).fma(scale, acc);
                partial = IntVector.zero(Lanes.INTS);
            }
        }
        float sum = Lanes.sumInOrder(acc);
        for (; j < cols; j++) {
            int b = j / block;
            sum += level(rowCodes, j) * codes[xc + j] * (scales[s + b] * aScales[xs + b]);
        }
        return mins == null ? sum : sum + int8Mins(row, a, token);
    }

    /** Whether a matrix of this height gets {@link Int8Strips} from {@link #prepareInt8Rows} (vector kernels on, one whole strip). */
    public static boolean repacksInt8Rows(int rows) {
        return PackedWeights.VECTOR_ENABLED && rows >= Int8Strips.ROWS;
    }

    @Override
    public void prepareInt8Rows() {
        if (repacksInt8Rows(rows) && strips == null) {
            synchronized (this) {
                if (strips == null) {
                    // 4-bit levels 0..15 (q4_1) go in nibbles shifted down by 8, 5-bit levels 0..31 (q5_1) in
                    // 5-bit codes shifted down by 16: the strips' codes are signed levels plus 8 or 16.
                    int levelBias = bits == 5 ? grid.maxLevel - 15 : bits < 8 ? Math.max(0, grid.maxLevel - 7) : 0;
                    strips = new Int8Strips(rows / Int8Strips.ROWS, cols, block, bits, levelBias, this::levelsOfRow,
                            scales, mins);
                }
            }
        }
    }

    /** The levels of a row as floats: whole groups by {@link GroupKernel#levels}, the rest one by one. */
    private void levelsOfRow(int row, float[] dst) {
        kernel.levels(row, dst, 0);
        long rowCodes = row * rowBytes + codesOffset;
        for (int j = vectorEnd; j < cols; j++) {
            dst[j] = level(rowCodes, j);
        }
    }

    @Override
    public long int8KernelBytes() {
        Int8Strips st = strips;
        return st == null ? kernelBytes() : st.bytesWithRest(rows, rowKernelBytes());
    }

    /** Rows the int8 row kernel takes from {@link Int8Strips} (the rest: scalar); 0 before {@link #prepareInt8Rows}. */
    public int int8StripRows() {
        Int8Strips st = strips;
        return st == null ? 0 : st.strips() * Int8Strips.ROWS;
    }

    /**
     * Rows in the strips ({@link #int8StripRows}: every whole strip of {@link Int8Strips#ROWS} rows)
     * through {@link Int8Strips}, the few rows after the last strip by the scalar reference; both
     * give the bits of {@link #dotInt8Scalar}, whatever the range.
     */
    @Override
    public void dotInt8Rows(int rowStart, int rowEnd, Int8Strips.Activations x, float[] y, int yOffset, int yStride) {
        checkActivations(x.codes());
        Int8Strips st = strips;
        int inStrips = st == null ? rowStart : Math.max(rowStart, Math.min(rowEnd, st.strips() * Int8Strips.ROWS));
        if (rowStart < inStrips) {
            st.rows(rowStart, inStrips, x, y, yOffset, yStride);
        }
        super.dotInt8Rows(inStrips, rowEnd, x, y, yOffset, yStride);
    }

    @Override
    public void dotInt8BatchVector(int row, Int8Activations a, float[] y, int yOffset, int yStride) {
        checkActivations(a);
        int tokens = a.tokens();
        int t = 0;
        for (; t + 4 <= tokens; t += 4) {
            dotInt8x4(row, a, t, y, yOffset + t * yStride, yStride);
        }
        for (; t < tokens; t++) {
            y[yOffset + t * yStride] = dotInt8Vector(row, a, t);
        }
    }

    /** Tokens t0 .. t0 + 3 per pass; per token exactly the operations of {@link #dotInt8Vector}. */
    private void dotInt8x4(int row, Int8Activations a, int t0, float[] y, int y0, int yStride) {
        long rowCodes = row * rowBytes + codesOffset;
        int s = row * blocksPerRow;
        byte[] codes = a.codes();
        float[] aScales = a.scales();
        int c0 = t0 * cols;
        int c1 = c0 + cols;
        int c2 = c1 + cols;
        int c3 = c2 + cols;
        int s0 = t0 * blocksPerRow;
        int s1 = s0 + blocksPerRow;
        int s2 = s1 + blocksPerRow;
        int s3 = s2 + blocksPerRow;
        FloatVector acc0 = FloatVector.zero(Lanes.FLOATS);
        FloatVector acc1 = acc0;
        FloatVector acc2 = acc0;
        FloatVector acc3 = acc0;
        IntVector p0 = IntVector.zero(Lanes.INTS);
        IntVector p1 = p0;
        IntVector p2 = p0;
        IntVector p3 = p0;
        int j = 0;
        for (; j < int8VectorEnd; j += Lanes.COUNT) {
            IntVector w = levels(rowCodes, j);
            p0 = w.mul((IntVector) ByteVector.fromArray(Lanes.BYTES, codes, c0 + j).castShape(Lanes.INTS, 0)).add(p0);
            p1 = w.mul((IntVector) ByteVector.fromArray(Lanes.BYTES, codes, c1 + j).castShape(Lanes.INTS, 0)).add(p1);
            p2 = w.mul((IntVector) ByteVector.fromArray(Lanes.BYTES, codes, c2 + j).castShape(Lanes.INTS, 0)).add(p2);
            p3 = w.mul((IntVector) ByteVector.fromArray(Lanes.BYTES, codes, c3 + j).castShape(Lanes.INTS, 0)).add(p3);
            if (((j + Lanes.COUNT) & blockMask) == 0 || j + Lanes.COUNT == int8VectorEnd) {
                int b = j / block;
                float d = scales[s + b];
                acc0 = ((FloatVector) p0.convert(VectorOperators.I2F, 0)).fma(FloatVector.broadcast(Lanes.FLOATS, d * aScales[s0 + b]), acc0);
                acc1 = ((FloatVector) p1.convert(VectorOperators.I2F, 0)).fma(FloatVector.broadcast(Lanes.FLOATS, d * aScales[s1 + b]), acc1);
                acc2 = ((FloatVector) p2.convert(VectorOperators.I2F, 0)).fma(FloatVector.broadcast(Lanes.FLOATS, d * aScales[s2 + b]), acc2);
                acc3 = ((FloatVector) p3.convert(VectorOperators.I2F, 0)).fma(FloatVector.broadcast(Lanes.FLOATS, d * aScales[s3 + b]), acc3);
                p0 = IntVector.zero(Lanes.INTS);
                p1 = p0;
                p2 = p0;
                p3 = p0;
            }
        }
        float r0 = Lanes.sumInOrder(acc0);
        float r1 = Lanes.sumInOrder(acc1);
        float r2 = Lanes.sumInOrder(acc2);
        float r3 = Lanes.sumInOrder(acc3);
        for (; j < cols; j++) {
            int b = j / block;
            int w = level(rowCodes, j);
            float d = scales[s + b];
            r0 += w * codes[c0 + j] * (d * aScales[s0 + b]);
            r1 += w * codes[c1 + j] * (d * aScales[s1 + b]);
            r2 += w * codes[c2 + j] * (d * aScales[s2 + b]);
            r3 += w * codes[c3 + j] * (d * aScales[s3 + b]);
        }
        if (mins != null) {
            r0 += int8Mins(row, a, t0);
            r1 += int8Mins(row, a, t0 + 1);
            r2 += int8Mins(row, a, t0 + 2);
            r3 += int8Mins(row, a, t0 + 3);
        }
        y[y0] = r0;
        y[y0 + yStride] = r1;
        y[y0 + 2 * yStride] = r2;
        y[y0 + 3 * yStride] = r3;
    }
}
