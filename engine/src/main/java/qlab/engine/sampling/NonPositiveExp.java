package qlab.engine.sampling;

/**
 * {@code exp(x)} for {@code x <= 0}, the only arguments softmax weights {@code exp(score - max)} need. Pure double
 * arithmetic, which Java evaluates identically on every platform, so sampling stays reproducible; about three
 * times faster than {@link StrictMath#exp} (the per-token cost of top-p and of unfiltered sampling is one
 * exponential per vocabulary entry). {@link StrictMath#exp} is the reference it is tested against (within 2 ulp).
 *
 * <p>Method: {@code x = (64k + j) * ln2/64 + r} with {@code |r| <= ln2/128}; {@code exp(x) = 2^k * 2^(j/64) * e^r},
 * the 64 powers {@code 2^(j/64)} tabulated once and {@code e^r} by its Taylor polynomial to degree 6 (truncation
 * below 1e-17 relative). {@code n * ln2/64} is subtracted in two parts (Cody and Waite) so the reduction is exact.
 */
final class NonPositiveExp {
    // fdlibm's split of ln 2: the high part has 32 significant bits, so n * LN2_HI / 64 is exact for |n| < 2^21.
    private static final double LN2_HI = 6.93147180369123816490e-01;
    private static final double LN2_LO = 1.90821492927058770002e-10;
    private static final double INV_LN2_TIMES_64 = 64 / 0.6931471805599453;
    private static final double[] TWO_TO_J_OVER_64 = new double[64];

    static {
        for (int j = 0; j < 64; j++) {
            TWO_TO_J_OVER_64[j] = StrictMath.pow(2.0, j / 64.0);
        }
    }

    private NonPositiveExp() {
    }

    /** {@code exp(x)} for {@code x <= 0} (or -inf); exactly 1 at 0 and 0 below the double range. */
    static double exp(double x) {
        if (x < -745.2) {
            return 0.0; // below half the smallest subnormal, and -inf
        }
        double n = Math.rint(x * INV_LN2_TIMES_64);
        double r = (x - n * (LN2_HI / 64)) - n * (LN2_LO / 64);
        long steps = (long) n;
        int j = (int) (steps & 63);
        int k = (int) (steps >> 6);
        // e^r - 1, added to 1 only after scaling by the table value: one rounding less than t * (1 + q).
        double q = r * (1 + r * (0.5 + r * (1.0 / 6 + r * (1.0 / 24 + r * (1.0 / 120 + r * (1.0 / 720))))));
        double t = TWO_TO_J_OVER_64[j];
        return Math.scalb(t + t * q, k);
    }
}
