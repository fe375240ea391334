package qlab.quant;

/** Rounding used by every quantizer in qlab. */
public final class Rounding {
    private Rounding() {
    }

    /**
     * Nearest integer with ties away from zero: 2.5 -> 3, -2.5 -> -3, 0.5 -> 1. {@link Math#round}
     * rounds ties up (-2.5 -> -2) and {@link Math#rint} to even (2.5 -> 2); both bias small weights.
     * Values beyond the int range saturate; callers clamp to their code range anyway.
     */
    public static int halfAwayFromZero(float v) {
        // |v| + 0.5 is exact in double for every float below 2^52, so the floor sees the true tie.
        double magnitude = Math.floor(Math.abs((double) v) + 0.5);
        return (int) Math.copySign(magnitude, v);
    }
}
