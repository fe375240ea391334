package qlab.quant.kernel;

import qlab.quant.Rounding;

/**
 * The integer levels a block format can store, and how a level is packed into a code of
 * {@link #bits} bits: level = step × code − offset (8-bit codes are the signed byte itself).
 * A dequantized value is always scale × level.
 */
public enum CodeGrid {
    /** q8_0, int8: −127..127 (−128 unused, so the grid is symmetric). */
    INT8(8, -127, 127, 1, 0, 0),
    /** q4_0, q4_8: −8..7, the asymmetric grid ggml uses with its signed-max scale. */
    Q4(4, -8, 7, 1, 8, 0),
    /** q4_1: unsigned 0..15 (the block's minimum carries the offset). */
    Q4U(4, 0, 15, 1, 0, 0),
    /** q5_0: −16..15, stored as 5-bit codes level + 16. */
    Q5(5, -16, 15, 1, 16, 0),
    /** q5_1: unsigned 0..31. */
    Q5U(5, 0, 31, 1, 0, 0),
    /** int4 reference: symmetric −7..7. */
    INT4(4, -7, 7, 1, 8, 0),
    /**
     * 2-bit: the odd levels −3, −1, 1, 3 (no zero, symmetric). For a Gaussian the MSE-optimal
     * uniform 4-level quantizer has step 0.9957σ (Max, 1960), i.e. scale 0.4979σ on this grid.
     */
    Q2(2, -3, 3, 2, 3, 0.4979f),
    /** Ternary −1, 0, 1 in 2 bits; optimal uniform 3-level step for a Gaussian is 1.2240σ (Max, 1960). */
    TERNARY(2, -1, 1, 1, 1, 1.2240f),
    /** Binary −1, 1 (sign); its least-squares scale is the mean absolute value. */
    BINARY(1, -1, 1, 2, 1, 0);

    public final int bits;
    public final int minLevel;
    public final int maxLevel;
    /** Distance between adjacent levels (2 for the odd-level grids). */
    public final int step;
    public final int offset;
    /** Start of the least-squares scale search, in units of the block's RMS; 0 where unused. */
    public final float gaussianScale;

    CodeGrid(int bits, int minLevel, int maxLevel, int step, int offset, float gaussianScale) {
        this.bits = bits;
        this.minLevel = minLevel;
        this.maxLevel = maxLevel;
        this.step = step;
        this.offset = offset;
        this.gaussianScale = gaussianScale;
    }

    public int levelOf(int code) {
        return bits == 8 ? (byte) code : step * code - offset;
    }

    public int codeOf(int level) {
        return bits == 8 ? level & 0xFF : (level + offset) / step;
    }

    /** The level nearest to y (a value divided by its scale), ties away from zero, clamped to the grid. */
    public int nearestLevel(float y) {
        int level;
        if (step == 1) {
            level = Rounding.halfAwayFromZero(y);
        } else {
            // Nearest odd integer: |y| in [2k, 2k + 2) -> 2k + 1; a tie (|y| even) goes away from zero.
            double odd = 2 * Math.floor(Math.abs((double) y) / 2) + 1;
            level = (int) Math.copySign(Math.min(odd, 1 << 20), y);
        }
        return Math.max(minLevel, Math.min(maxLevel, level));
    }
}
