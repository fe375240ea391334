package qlab.quant.format;

/** How the plain (no importance) quantizer picks a block's scale. */
enum ScaleRule {
    /** max|x| / maxLevel: every value fits, the extreme one exactly. */
    MAX_ABS,
    /**
     * ggml's signed-max trick for the asymmetric −8..7 grid: d = m / −8, m the value of largest
     * magnitude with its sign, so that value lands exactly on −8 (the grid's long end) and the
     * other side still has 7 levels. Needs a signed stored scale.
     */
    SIGNED_MAX,
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
