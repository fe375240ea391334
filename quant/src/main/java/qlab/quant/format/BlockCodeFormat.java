package qlab.quant.format;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import qlab.quant.PackedWeights;
import qlab.quant.QuantFormat;
import qlab.quant.kernel.BlockCodeWeights;
import qlab.quant.kernel.CodeGrid;
import qlab.quant.kernel.CodePacking;

/**
 * An integer block format: a row is [stored scales | codes]. The scales' layout is the
 * format's {@link ScaleLayout}; the codes are {@link CodeGrid#bits}-bit codes for the row padded to
 * a multiple of 32 values, packed as {@link CodePacking} describes. Padding values quantize 0.
 *
 * <p>Quantizing a row with qlab's own rules: choose each group's ideal scale ({@link ScaleRule},
 * or the importance search), let the layout round it to what it stores, then give every value the
 * nearest level under the effective (stored) scale, ties away from zero. Choosing codes against
 * the stored scale, not the ideal one, means the codes fit what dequantization will actually
 * multiply by.
 *
 * <p>The formats carrying ggml's names (q8_0, q4_0, q4_1, q5_0, q5_1) quantize with ggml's rules
 * instead ({@link GgmlRule}), so that what a sweep measures is what llama.cpp runs; they store an
 * fp16 scale per group and, for q4_1 and q5_1, an fp16 minimum per group after the scales
 * (value = scale × level + min).
 */
public abstract class BlockCodeFormat implements QuantFormat {
    private final String name;
    private final int groupSize;
    private final int defaultGroupSize;
    private final CodeGrid grid;
    private final ScaleRule rule;
    private final ScaleLayout layout;
    /** ggml's quantizer for the formats carrying ggml's names; null for qlab's own rules. */
    private final GgmlRule ggmlRule;

    BlockCodeFormat(String name, int groupSize, int defaultGroupSize, CodeGrid grid, ScaleRule rule, ScaleLayout layout) {
        this(name, groupSize, defaultGroupSize, grid, rule, layout, null);
    }

    /**
     * A format quantized by one of ggml's rules: an fp16 scale per group ({@link ScaleLayout.Fp16PerBlock}),
     * for the affine rules an fp16 minimum per group after the scales.
     */
    BlockCodeFormat(String name, int groupSize, int defaultGroupSize, CodeGrid grid, GgmlRule ggmlRule) {
        this(name, groupSize, defaultGroupSize, grid, null, new ScaleLayout.Fp16PerBlock(groupSize), ggmlRule);
    }

    private BlockCodeFormat(String name, int groupSize, int defaultGroupSize, CodeGrid grid, ScaleRule rule,
                            ScaleLayout layout, GgmlRule ggmlRule) {
        this.name = name;
        this.groupSize = groupSize;
        this.defaultGroupSize = defaultGroupSize;
        this.grid = grid;
        this.rule = rule;
        this.layout = layout;
        this.ggmlRule = ggmlRule;
    }

    @Override
    public final String name() {
        return name;
    }

    @Override
    public final int groupSize() {
        return groupSize;
    }

    @Override
    public final String label() {
        return groupSize == defaultGroupSize ? name : name + "/g" + groupSize;
    }

    @Override
    public final boolean isInteger() {
        return true;
    }

    /** The integer levels this format stores. */
    public final CodeGrid grid() {
        return grid;
    }

    @Override
    public final long bytesPerRow(int cols) {
        return headerBytes(cols) + CodePacking.codeBytes(cols, grid.bits);
    }

    /** Whether each group also stores an fp16 minimum (value = scale × level + min): q4_1, q5_1. */
    public final boolean hasMins() {
        return ggmlRule != null && ggmlRule.affine;
    }

    /** Bytes before the codes: the layout's scales, then the minima if the format has them. */
    private long headerBytes(int cols) {
        return layout.headerBytes(cols) + (hasMins() ? 2L * ScaleLayout.blocks(cols, groupSize) : 0);
    }

    /** The minima of a stored row, one per group, into mins[offset ..]. */
    private void decodeMins(MemorySegment src, long rowOffset, int cols, float[] mins, int offset) {
        long at = rowOffset + layout.headerBytes(cols);
        for (int b = 0; b < ScaleLayout.blocks(cols, groupSize); b++) {
            mins[offset + b] = Float.float16ToFloat(src.get(ScaleLayout.I16_LE, at + 2L * b));
        }
    }

    @Override
    public final void quantizeRow(float[] src, int srcOffset, int cols, float[] importance, MemorySegment dst, long dstOffset) {
        if (importance != null && importance.length < cols) {
            throw new IllegalArgumentException("importance has " + importance.length + " weights for " + cols + " columns");
        }
        if (ggmlRule != null) {
            quantizeGgml(src, srcOffset, cols, importance, dst, dstOffset);
            return;
        }
        int groupValues = layout.groupValues(cols);
        float[] ideal = new float[(cols + groupValues - 1) / groupValues];
        for (int g = 0; g < ideal.length; g++) {
            int start = g * groupValues;
            ideal[g] = ScaleSearch.choose(rule, grid, src, srcOffset + start, Math.min(groupValues, cols - start),
                    importance, start);
        }
        int block = layout.kernelBlock();
        float[] effective = new float[(cols + block - 1) / block];
        layout.encode(ideal, cols, dst, dstOffset, effective);

        long codes = dstOffset + layout.headerBytes(cols);
        int padded = CodePacking.paddedCols(cols);
        dst.asSlice(codes, CodePacking.codeBytes(cols, grid.bits)).fill((byte) 0);
        for (int j = 0; j < padded; j++) {
            float v = j < cols ? src[srcOffset + j] : 0f;
            float d = effective[Math.min(j, cols - 1) / block];
            int level = grid.nearestLevel(d == 0 ? 0f : v / d);
            CodePacking.write(dst, codes, j, cols, grid.bits, grid.codeOf(level));
        }
    }

    /** ggml's rule, block by block: its fp16 scales (and minima) and its codes, in qlab's layout. */
    private void quantizeGgml(float[] src, int srcOffset, int cols, float[] importance, MemorySegment dst, long dstOffset) {
        GgmlRule.Blocks q = ggmlRule.quantize(src, srcOffset, cols, importance, groupSize);
        int blocks = q.d().length;
        long mins = dstOffset + layout.headerBytes(cols);
        for (int b = 0; b < blocks; b++) {
            dst.set(ScaleLayout.I16_LE, dstOffset + 2L * b, q.d()[b]);
            if (hasMins()) {
                dst.set(ScaleLayout.I16_LE, mins + 2L * b, q.m()[b]);
            }
        }
        long codes = dstOffset + headerBytes(cols);
        dst.asSlice(codes, CodePacking.codeBytes(cols, grid.bits)).fill((byte) 0);
        for (int j = 0; j < CodePacking.paddedCols(cols); j++) {
            CodePacking.write(dst, codes, j, cols, grid.bits, q.codes()[j]);
        }
    }

    /** Value j of a row: scale × level, plus the group's minimum where the format has one (two f32 operations, as ggml). */
    @Override
    public final void dequantizeRow(MemorySegment src, long srcOffset, int cols, float[] dst, int dstOffset) {
        dequantize(src, srcOffset, cols, dst, dstOffset, grid.bits == 8 || grid.bits == 4 || grid.bits == 5);
    }

    /** {@link #dequantizeRow} one code at a time through {@link CodePacking#read}: the reference for {@link #decodeUnits}. */
    final void dequantizeRowReference(MemorySegment src, long srcOffset, int cols, float[] dst, int dstOffset) {
        dequantize(src, srcOffset, cols, dst, dstOffset, false);
    }

    private void dequantize(MemorySegment src, long srcOffset, int cols, float[] dst, int dstOffset, boolean byUnits) {
        int block = layout.kernelBlock();
        float[] effective = new float[(cols + block - 1) / block];
        layout.decode(src, srcOffset, cols, effective, 0);
        float[] mins = hasMins() ? new float[effective.length] : null;
        if (mins != null) {
            decodeMins(src, srcOffset, cols, mins, 0);
        }
        long codes = srcOffset + headerBytes(cols);
        if (byUnits) {
            decodeUnits(src, codes, cols, effective, mins, block, dst, dstOffset);
        } else {
            decodeEach(src, codes, cols, effective, mins, block, dst, dstOffset);
        }
    }

    private void decodeEach(MemorySegment src, long codes, int cols, float[] effective, float[] mins, int block,
                            float[] dst, int dstOffset) {
        for (int j = 0; j < cols; j++) {
            float v = effective[j / block] * grid.levelOf(CodePacking.read(src, codes, j, cols, grid.bits));
            dst[dstOffset + j] = mins == null ? v : v + mins[j / block];
        }
    }

    /**
     * {@link #dequantizeRow} for 8-, 4- and 5-bit codes, whose 16-byte units always hold whole
     * 16 or 32 values: the row's code bytes copied out once, each byte's fields taken in turn (the
     * KV cache decodes a tile of rows per attention task through this). The same values as reading
     * each code with {@link CodePacking#read}.
     */
    private void decodeUnits(MemorySegment src, long codes, int cols, float[] effective, float[] mins, int block,
                             float[] dst, int dstOffset) {
        int padded = CodePacking.paddedCols(cols);
        int nibbleBits = grid.bits == 5 ? 4 : grid.bits;
        byte[] b = new byte[(int) CodePacking.codeBytes(padded, grid.bits)];
        MemorySegment.copy(src, ValueLayout.JAVA_BYTE, codes, b, 0, b.length);
        int unit = CodePacking.unitValues(nibbleBits);
        int perByte = 8 / nibbleBits;
        int mask = (1 << nibbleBits) - 1;
        int high = padded / 2; // the fifth bits' plane of 5-bit codes
        for (int u = 0; u < padded; u += unit) {
            int byteBase = u / unit * 16;
            for (int i = 0; i < 16; i++) {
                int v = b[byteBase + i] & 0xFF;
                for (int k = 0; k < perByte; k++) {
                    int j = u + k * 16 + i;
                    if (j >= cols) {
                        continue;
                    }
                    int code = v >>> (k * nibbleBits) & mask;
                    if (grid.bits == 5) {
                        code |= (b[high + (j >>> 3)] >>> (j & 7) & 1) << 4;
                    }
                    float x = effective[j / block] * grid.levelOf(code);
                    dst[dstOffset + j] = mins == null ? x : x + mins[j / block];
                }
            }
        }
    }

    @Override
    public final PackedWeights pack(MemorySegment data, int rows, int cols) {
        int block = layout.kernelBlock();
        int blocksPerRow = (cols + block - 1) / block;
        long rowBytes = bytesPerRow(cols);
        float[] scales = new float[rows * blocksPerRow];
        float[] mins = hasMins() ? new float[rows * blocksPerRow] : null;
        for (int r = 0; r < rows; r++) {
            layout.decode(data, r * rowBytes, cols, scales, r * blocksPerRow);
            if (mins != null) {
                decodeMins(data, r * rowBytes, cols, mins, r * blocksPerRow);
            }
        }
        return new BlockCodeWeights(data, rows, cols, rowBytes, headerBytes(cols), grid, block, scales, mins);
    }

    @Override
    public String toString() {
        return label();
    }
}
