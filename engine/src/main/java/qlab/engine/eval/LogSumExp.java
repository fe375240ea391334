package qlab.engine.eval;

import jdk.incubator.vector.DoubleVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorSpecies;
import qlab.engine.tensor.VectorSupport;

/**
 * log Σ exp(logits) over one row of logits, in float64 and shifted by the row's maximum, as every
 * log-probability in the measurements needs it (once per scored position, over the whole
 * vocabulary: 152k terms for Qwen2).
 *
 * <p>{@link #scalar} is the reference; {@link #vector} does the same arithmetic (each logit widened
 * to double, minus the maximum, exponentiated in double) a vector of doubles at a time, with the
 * sum split over lanes, so the two differ only in the order of the float64 additions and in the
 * last bit of each exponential (the vector unit's exp is within 1 ulp of {@link Math#exp}).
 * Scalar {@code Math.exp} over the vocabulary took ~10% of a perplexity run on the 0.5B shapes.
 */
public final class LogSumExp {

    private static final VectorSpecies<Double> D = DoubleVector.SPECIES_PREFERRED;
    /** Floats that widen into one double vector: half its width. */
    private static final VectorSpecies<Float> HALF =
            FloatVector.SPECIES_PREFERRED.withShape(VectorShape.forBitSize(D.vectorBitSize() / 2));

    private LogSumExp() {}

    /** The vector kernel, or the scalar reference when vector kernels are switched off. */
    public static double of(float[] logits, int offset, int n) {
        return VectorSupport.ENABLED ? vector(logits, offset, n) : scalar(logits, offset, n);
    }

    public static double scalar(float[] logits, int offset, int n) {
        float max = Float.NEGATIVE_INFINITY;
        for (int i = 0; i < n; i++) {
            max = Math.max(max, logits[offset + i]);
        }
        double sum = 0;
        for (int i = 0; i < n; i++) {
            sum += Math.exp((double) logits[offset + i] - max);
        }
        return max + Math.log(sum);
    }

    public static double vector(float[] logits, int offset, int n) {
        VectorSpecies<Float> f = VectorSupport.F;
        FloatVector m = FloatVector.broadcast(f, Float.NEGATIVE_INFINITY);
        int i = 0;
        for (int end = f.loopBound(n); i < end; i += f.length()) {
            m = m.max(FloatVector.fromArray(f, logits, offset + i));
        }
        float max = m.reduceLanes(VectorOperators.MAX);
        for (; i < n; i++) {
            max = Math.max(max, logits[offset + i]);
        }
        if (Float.isNaN(max) || max == Float.NEGATIVE_INFINITY || max == Float.POSITIVE_INFINITY) {
            return scalar(logits, offset, n); // NaN, empty or infinite rows: the reference's answer
        }
        double shift = max;
        DoubleVector acc0 = DoubleVector.zero(D);
        DoubleVector acc1 = acc0;
        int w = D.length();
        int j = 0;
        for (int end = n - 2 * w; j <= end; j += 2 * w) {
            acc0 = acc0.add(widen(logits, offset + j).sub(shift).lanewise(VectorOperators.EXP));
            acc1 = acc1.add(widen(logits, offset + j + w).sub(shift).lanewise(VectorOperators.EXP));
        }
        double sum = acc0.add(acc1).reduceLanes(VectorOperators.ADD);
        for (; j < n; j++) {
            sum += Math.exp((double) logits[offset + j] - shift);
        }
        return max + Math.log(sum);
    }

    private static DoubleVector widen(float[] logits, int at) {
        return (DoubleVector) FloatVector.fromArray(HALF, logits, at).convertShape(VectorOperators.F2D, D, 0);
    }
}
