package qlab.engine.tensor;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorShuffle;
import jdk.incubator.vector.VectorSpecies;

/**
 * The one place the float vector species is chosen, and the switch that turns vector kernels off
 * ({@code -Dqlab.vector=false}: every kernel then runs its scalar reference, for debugging and for
 * agreement tests).
 */
public final class VectorSupport {

    /**
     * {@code -Dqlab.vector.lanes=8|16}: the float lane count forced, for every kernel (these here,
     * and quant's, which read it through {@code Lanes}), so that both shapes (8 = AVX2, 16 =
     * AVX-512) are tested on any machine, the foreign one emulated; 0 when not set.
     */
    public static final int FORCED_LANES = forcedLanes();
    public static final VectorSpecies<Float> F = switch (FORCED_LANES) {
        case 8 -> FloatVector.SPECIES_256;
        case 16 -> FloatVector.SPECIES_512;
        default -> FloatVector.SPECIES_PREFERRED;
    };
    public static final int LANES = F.length();
    public static final boolean ENABLED = !"false".equals(System.getProperty("qlab.vector"));

    private static final VectorShuffle<Float>[] HALVES = halves();

    static {
        if (LANES < 4) {
            throw new IllegalStateException("qlab needs a float vector of at least 4 lanes, this JVM offers " + LANES
                    + " (run with -Dqlab.vector=false to use the scalar kernels)");
        }
    }

    private VectorSupport() {}

    private static int forcedLanes() {
        String forced = System.getProperty("qlab.vector.lanes");
        if (forced == null) {
            return 0;
        }
        return switch (forced) {
            case "8" -> 8;
            case "16" -> 16;
            default -> throw new IllegalArgumentException("-Dqlab.vector.lanes must be 8 or 16, got " + forced);
        };
    }

    @SuppressWarnings("unchecked")
    private static VectorShuffle<Float>[] halves() {
        int steps = Integer.numberOfTrailingZeros(LANES);
        VectorShuffle<Float>[] s = new VectorShuffle[steps];
        for (int i = 0; i < steps; i++) {
            int half = LANES >> (i + 1);
            s[i] = VectorShuffle.fromOp(F, lane -> (lane + half) % LANES);
        }
        return s;
    }

    /**
     * Sum of the lanes in a fixed pairwise order (halves folded onto each other). Unlike
     * {@code reduceLanes(ADD)}, whose order is unspecified and may differ between compiled and
     * interpreted code, this gives the same bits everywhere, which the batched-equals-single
     * guarantees rely on.
     */
    public static float sum(FloatVector v) {
        for (VectorShuffle<Float> s : HALVES) {
            v = v.add(v.rearrange(s));
        }
        return v.lane(0);
    }

    private static final float LOG2E = 1.44269504f;
    private static final float LN2_HI = 0.693359375f;
    private static final float LN2_LO = -2.12194440e-4f;
    private static final float ROUND = 12582912f; // 1.5 * 2^23: adding and subtracting it rounds to an integer

    /**
     * e^x lane-wise from adds, multiplies, FMAs and bit operations only, so its result is the same
     * whether the JIT has compiled the caller or not ({@code lanewise(EXP)} is not: its intrinsic
     * and its fallback round differently, which broke bitwise batched-equals-single guarantees).
     * Cody-Waite reduction x = n ln2 + r, |r| &lt;= ln2/2, a degree-6 polynomial for e^r, then 2^n
     * through the exponent bits. Inputs are clamped to [-87.3, 88]: the result is within 4 ulp (about 5e-7 relative)
     * of {@link Math#exp} there, 0-ish below and large-but-finite above.
     */
    public static FloatVector exp(FloatVector x) {
        x = x.max(-87.3f).min(88.0f);
        FloatVector n = x.fma(LOG2E, ROUND).sub(ROUND);
        FloatVector r = n.fma(c(-LN2_HI), x);
        r = n.fma(c(-LN2_LO), r);
        FloatVector p = c(1.3888889e-3f);
        p = p.fma(r, c(8.3333333e-3f));
        p = p.fma(r, c(4.1666667e-2f));
        p = p.fma(r, c(1.6666667e-1f));
        p = p.fma(r, c(0.5f));
        p = p.fma(r, c(1f));
        p = p.fma(r, c(1f));
        var bits = n.convert(jdk.incubator.vector.VectorOperators.F2I, 0).reinterpretAsInts()
                .add(127).lanewise(jdk.incubator.vector.VectorOperators.LSHL, 23);
        return p.mul(bits.reinterpretAsFloats());
    }

    private static FloatVector c(float v) {
        return FloatVector.broadcast(F, v);
    }

    /** The scalar twin of {@link #exp(FloatVector)}: the same operations, the same bits. */
    public static float exp(float x) {
        x = Math.min(Math.max(x, -87.3f), 88.0f);
        float n = Math.fma(x, LOG2E, ROUND) - ROUND;
        float r = Math.fma(n, -LN2_HI, x);
        r = Math.fma(n, -LN2_LO, r);
        float p = 1.3888889e-3f;
        p = Math.fma(p, r, 8.3333333e-3f);
        p = Math.fma(p, r, 4.1666667e-2f);
        p = Math.fma(p, r, 1.6666667e-1f);
        p = Math.fma(p, r, 0.5f);
        p = Math.fma(p, r, 1f);
        p = Math.fma(p, r, 1f);
        return p * Float.intBitsToFloat(((int) n + 127) << 23);
    }

    /** Bits of the vector unit, for reports. */
    public static int bits() {
        return F.vectorBitSize();
    }
}
