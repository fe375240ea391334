package qlab.quant.format;

import java.lang.foreign.MemorySegment;
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
 * <p>Quantizing a row: choose each group's ideal scale ({@link ScaleRule}, or the importance
 * search), let the layout round it to what it stores, then give every value the nearest level
 * under the effective (stored) scale, ties away from zero. Choosing codes against the stored
 * scale, not the ideal one, means the codes fit what dequantization will actually multiply by.
 */
public abstract class BlockCodeFormat implements QuantFormat {
    private final String name;
    private final int groupSize;
    private final int defaultGroupSize;
    private final CodeGrid grid;
    private final ScaleRule rule;
    private final ScaleLayout layout;

    BlockCodeFormat(String name, int groupSize, int defaultGroupSize, CodeGrid grid, ScaleRule rule, ScaleLayout layout) {
        this.name = name;
        this.groupSize = groupSize;
        this.defaultGroupSize = defaultGroupSize;
        this.grid = grid;
        this.rule = rule;
        this.layout = layout;
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
        return layout.headerBytes(cols) + CodePacking.codeBytes(cols, grid.bits);
    }

    @Override
    public final void quantizeRow(float[] src, int srcOffset, int cols, float[] importance, MemorySegment dst, long dstOffset) {
        if (importance != null && importance.length < cols) {
            throw new IllegalArgumentException("importance has " + importance.length + " weights for " + cols + " columns");
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

    @Override
    public final void dequantizeRow(MemorySegment src, long srcOffset, int cols, float[] dst, int dstOffset) {
        int block = layout.kernelBlock();
        float[] effective = new float[(cols + block - 1) / block];
        layout.decode(src, srcOffset, cols, effective, 0);
        long codes = srcOffset + layout.headerBytes(cols);
        for (int j = 0; j < cols; j++) {
            dst[dstOffset + j] = effective[j / block] * grid.levelOf(CodePacking.read(src, codes, j, cols, grid.bits));
        }
    }

    @Override
    public final PackedWeights pack(MemorySegment data, int rows, int cols) {
        int block = layout.kernelBlock();
        int blocksPerRow = (cols + block - 1) / block;
        long rowBytes = bytesPerRow(cols);
        float[] scales = new float[rows * blocksPerRow];
        for (int r = 0; r < rows; r++) {
            layout.decode(data, r * rowBytes, cols, scales, r * blocksPerRow);
        }
        return new BlockCodeWeights(data, rows, cols, rowBytes, layout.headerBytes(cols), grid, block, scales);
    }

    @Override
    public String toString() {
        return label();
    }
}
