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
 * last bits of each exponential. Scalar {@code Math.exp} over the vocabulary took ~10% of a
 * perplexity run on the 0.5B shapes.
 *
 * <p>The vector exponential is {@link #exp(DoubleVector)}, built from FMAs and bit operations, not
 * {@code lanewise(EXP)}, and the lanes are summed in index order, not by {@code reduceLanes(ADD)}:
 * those two round differently in compiled and interpreted code, so a measurement's last bits
 * depended on when the JIT compiled this class (seen as a KL mean differing in its 17th digit
 * between two runs). Now the same logits give the same bits in every run.
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
            acc0 = acc0.add(exp(widen(logits, offset + j).sub(shift)));
            acc1 = acc1.add(exp(widen(logits, offset + j + w).sub(shift)));
        }
        DoubleVector lanes = acc0.add(acc1);
        double sum = 0;
        for (int l = 0; l < w; l++) {
            sum += lanes.lane(l);
        }
        for (; j < n; j++) {
            sum += exp((double) logits[offset + j] - shift);
        }
        return max + Math.log(sum);
    }

    private static final double LOG2E = 1.4426950408889634;
    private static final double LN2_HI = 6.93147180369123816490e-01; // ln 2, upper bits (fdlibm's split)
    private static final double LN2_LO = 1.90821492927058770002e-10;
    private static final double ROUND = 0x1.8p52; // adding and subtracting it rounds to an integer
    private static final long ROUND_BITS = Double.doubleToRawLongBits(ROUND);
    /** 1/k! for k = 13 down to 0: Taylor series of e^r, |r| <= ln2/2 (truncation below 1e-17). */
    private static final double[] TAYLOR = taylor();

    private static double[] taylor() {
        double[] c = new double[14];
        double f = 1;
        for (int k = 1; k <= 13; k++) {
            f *= k;
            c[13 - k] = 1 / f;
        }
        c[13] = 1;
        return c;
    }

    /**
     * e^x lane-wise from FMAs, adds and bit operations, so the same bits compiled or interpreted:
     * x = n ln2 + r (Cody-Waite), a degree-13 Taylor polynomial for e^r, 2^n through the exponent
     * bits. x is clamped to [-708, 709] (results there within a few ulp of {@link Math#exp}; below
     * -708 it returns e^-708 ≈ 3e-308 instead of a smaller number, which no sum here can see).
     */
    static DoubleVector exp(DoubleVector x) {
        x = x.max(-708.0).min(709.0);
        DoubleVector t = x.fma(LOG2E, ROUND);
        DoubleVector n = t.sub(ROUND);
        DoubleVector r = n.fma(DoubleVector.broadcast(D, -LN2_HI), x);
        r = n.fma(DoubleVector.broadcast(D, -LN2_LO), r);
        DoubleVector p = DoubleVector.broadcast(D, TAYLOR[0]);
        for (int k = 1; k < TAYLOR.length; k++) {
            p = p.fma(r, DoubleVector.broadcast(D, TAYLOR[k]));
        }
        var scale = t.reinterpretAsLongs().sub(ROUND_BITS).add(1023).lanewise(VectorOperators.LSHL, 52);
        return p.mul(scale.reinterpretAsDoubles());
    }

    /** The scalar twin of {@link #exp(DoubleVector)}: the same operations, the same bits. */
    static double exp(double x) {
        x = Math.min(Math.max(x, -708.0), 709.0);
        double t = Math.fma(x, LOG2E, ROUND);
        double n = t - ROUND;
        double r = Math.fma(n, -LN2_HI, x);
        r = Math.fma(n, -LN2_LO, r);
        double p = TAYLOR[0];
        for (int k = 1; k < TAYLOR.length; k++) {
            p = Math.fma(p, r, TAYLOR[k]);
        }
        return p * Double.longBitsToDouble((Double.doubleToRawLongBits(t) - ROUND_BITS + 1023) << 52);
    }

    private static DoubleVector widen(float[] logits, int at) {
        return (DoubleVector) FloatVector.fromArray(HALF, logits, at).convertShape(VectorOperators.F2D, D, 0);
    }
}
