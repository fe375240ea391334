package qlab.quant.format;

/** How the plain (no importance) quantizer picks a block's scale. */
enum ScaleRule {
    /** max|x| / maxLevel: every value fits, the extreme one exactly. */
    MAX_ABS,
    /**
     * For a non-negative stored scale (u8 sub-scales) on the −8..7 grid: the smallest d with
     * every value inside the grid, max(maxPositive / 7, maxNegative / 8).
     */
    POSITIVE_MAX,
    /** Start at the Gaussian-optimal scale × RMS, then alternate code assignment and the least-squares scale. */
    LEAST_SQUARES,
    /** Mean absolute value: the least-squares scale of sign codes. */
    MEAN_ABS
}
