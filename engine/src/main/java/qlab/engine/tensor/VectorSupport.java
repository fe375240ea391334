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

    public static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;
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

    /** Bits of the vector unit, for reports. */
    public static int bits() {
        return F.vectorBitSize();
    }
}
