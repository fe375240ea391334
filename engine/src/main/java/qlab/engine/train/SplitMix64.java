package qlab.engine.train;

/**
 * SplitMix64 (Steele, Lea and Flood): the whole state is one long, so a checkpoint records it as a
 * number and a resumed run draws exactly what the uninterrupted one would have. Its output is fixed
 * by the published algorithm, not by a JDK version.
 */
public final class SplitMix64 {
    private long state;

    public SplitMix64(long state) {
        this.state = state;
    }

    public long state() {
        return state;
    }

    public long nextLong() {
        long z = (state += 0x9E3779B97F4A7C15L);
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /** Uniform in [0, 1) with 53 random bits. */
    public double nextDouble() {
        return (nextLong() >>> 11) * 0x1.0p-53;
    }

    /** Uniform in [0, bound), bound &gt; 0 (the multiply-shift map; its bias is below 2^-30 for bounds under 2^31). */
    public int nextInt(int bound) {
        return (int) (((nextLong() >>> 33) * bound) >>> 31);
    }

    /**
     * A standard normal draw: Box–Muller from two uniforms, the cosine branch only. StrictMath, whose
     * results are specified to the bit, so initial weights are the same on every JVM and CPU.
     */
    public double nextGaussian() {
        double u1 = 1.0 - nextDouble(); // (0, 1]: log is finite
        double u2 = nextDouble();
        return StrictMath.sqrt(-2.0 * StrictMath.log(u1)) * StrictMath.cos(2.0 * Math.PI * u2);
    }
}
