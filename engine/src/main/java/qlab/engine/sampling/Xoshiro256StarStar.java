package qlab.engine.sampling;

/**
 * xoshiro256** (Blackman and Vigna), seeded through SplitMix64. Chosen over {@code java.util.SplittableRandom}
 * because its output sequence is fixed by the published algorithm, not by a JDK version: a seed must reproduce
 * a generated text exactly on any JVM and platform.
 */
final class Xoshiro256StarStar {
    private long s0;
    private long s1;
    private long s2;
    private long s3;

    Xoshiro256StarStar(long seed) {
        // SplitMix64 expands one 64-bit seed into the 256-bit state; it never yields the all-zero state.
        long x = seed;
        x += 0x9E3779B97F4A7C15L;
        s0 = splitMix(x);
        x += 0x9E3779B97F4A7C15L;
        s1 = splitMix(x);
        x += 0x9E3779B97F4A7C15L;
        s2 = splitMix(x);
        x += 0x9E3779B97F4A7C15L;
        s3 = splitMix(x);
    }

    /** A generator with the given raw state, for checking against the published reference outputs. */
    static Xoshiro256StarStar fromState(long a, long b, long c, long d) {
        Xoshiro256StarStar generator = new Xoshiro256StarStar(0L);
        generator.s0 = a;
        generator.s1 = b;
        generator.s2 = c;
        generator.s3 = d;
        return generator;
    }

    static long splitMix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    long nextLong() {
        long result = Long.rotateLeft(s1 * 5, 7) * 9;
        long t = s1 << 17;
        s2 ^= s0;
        s3 ^= s1;
        s1 ^= s2;
        s0 ^= s3;
        s2 ^= t;
        s3 = Long.rotateLeft(s3, 45);
        return result;
    }

    /** Uniform in [0, 1) with 53 random bits. */
    double nextDouble() {
        return (nextLong() >>> 11) * 0x1.0p-53;
    }
}
