package qlab.quant.format;

import qlab.quant.kernel.CodeGrid;

/** Chooses the ideal (unrounded) scale of one block of values. */
final class ScaleSearch {
    private ScaleSearch() {
    }

    /** Alternations of "assign codes, solve the scale" for LEAST_SQUARES; converges in a few. */
    static final int LSQ_ITERATIONS = 8;
    /** Importance search: candidate scales base × (1 + k·STEP), |k| ≤ STEPS. */
    static final int CANDIDATE_STEPS = 12;
    static final float CANDIDATE_STEP = 0.025f;

    /**
     * Scale for x[off .. off + n). With {@code importance} null this is the plain reference rule;
     * otherwise importance[impOff + i] weighs value i and the result is the candidate scale with
     * the least weighted squared error (the plain rule's scale, weighted, is one of the candidates,
     * so the weighted error never gets worse).
     */
    static float choose(ScaleRule rule, CodeGrid grid, float[] x, int off, int n, float[] importance, int impOff) {
        float base = plain(rule, grid, x, off, n, importance, impOff);
        if (importance == null || base == 0) {
            return base;
        }
        float best = base;
        double bestError = weightedError(grid, x, off, n, importance, impOff, base);
        for (int k = -CANDIDATE_STEPS; k <= CANDIDATE_STEPS; k++) {
            if (k == 0) {
                continue;
            }
            float d = base * (1 + k * CANDIDATE_STEP);
            double e = weightedError(grid, x, off, n, importance, impOff, d);
            if (e < bestError) {
                bestError = e;
                best = d;
            }
        }
        // One least-squares step from the best candidate with its codes fixed.
        float refined = leastSquaresStep(grid, x, off, n, importance, impOff, best);
        if (refined != 0 && weightedError(grid, x, off, n, importance, impOff, refined) < bestError) {
            best = refined;
        }
        return best;
    }

    private static float weight(float[] importance, int i) {
        return importance == null ? 1f : importance[i];
    }

    private static float plain(ScaleRule rule, CodeGrid grid, float[] x, int off, int n, float[] importance, int impOff) {
        switch (rule) {
            case MAX_ABS -> {
                float amax = 0;
                for (int i = 0; i < n; i++) {
                    amax = Math.max(amax, Math.abs(x[off + i]));
                }
                return amax / grid.maxLevel;
            }
            case POSITIVE_MAX -> {
                float maxPos = 0;
                float maxNeg = 0;
                for (int i = 0; i < n; i++) {
                    maxPos = Math.max(maxPos, x[off + i]);
                    maxNeg = Math.max(maxNeg, -x[off + i]);
                }
                return Math.max(maxPos / grid.maxLevel, maxNeg / -grid.minLevel);
            }
            case MEAN_ABS -> {
                double num = 0;
                double den = 0;
                for (int i = 0; i < n; i++) {
                    float w = weight(importance, impOff + i);
                    num += w * Math.abs(x[off + i]);
                    den += w;
                }
                return den > 0 ? (float) (num / den) : 0f;
            }
            case LEAST_SQUARES -> {
                double sq = 0;
                double den = 0;
                for (int i = 0; i < n; i++) {
                    float w = weight(importance, impOff + i);
                    sq += w * (double) x[off + i] * x[off + i];
                    den += w;
                }
                if (sq == 0 || den == 0) {
                    return 0;
                }
                float d = (float) (grid.gaussianScale * Math.sqrt(sq / den));
                for (int it = 0; it < LSQ_ITERATIONS; it++) {
                    float next = leastSquaresStep(grid, x, off, n, importance, impOff, d);
                    if (next == d || next == 0) {
                        break;
                    }
                    d = next;
                }
                return d;
            }
            default -> throw new IllegalStateException("unhandled rule " + rule);
        }
    }

    /** The scale minimising Σ w (x − d·q)² for the codes q that scale {@code d} assigns. */
    static float leastSquaresStep(CodeGrid grid, float[] x, int off, int n, float[] importance, int impOff, float d) {
        double num = 0;
        double den = 0;
        for (int i = 0; i < n; i++) {
            float w = weight(importance, impOff + i);
            int q = grid.nearestLevel(x[off + i] / d);
            num += w * (double) x[off + i] * q;
            den += w * (double) q * q;
        }
        return den > 0 ? (float) (num / den) : 0f;
    }

    /** Σ w (x − d·q)², the codes q chosen for scale d as the quantizer chooses them. */
    static double weightedError(CodeGrid grid, float[] x, int off, int n, float[] importance, int impOff, float d) {
        double e = 0;
        for (int i = 0; i < n; i++) {
            float v = x[off + i];
            double r = v - d * (float) grid.nearestLevel(v / d);
            e += weight(importance, impOff + i) * r * r;
        }
        return e;
    }
}
