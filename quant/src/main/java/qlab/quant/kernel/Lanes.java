package qlab.quant.kernel;

import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorSpecies;
import qlab.engine.tensor.VectorSupport;

/**
 * The vector shapes every kernel uses, chosen once from the CPU: 16 float lanes with AVX-512,
 * 8 with AVX2. A chunk of {@link #COUNT} values is one float vector, loaded from the same number
 * of code bytes (byte→float casts keep the lane count, never {@code convertShape} parts ≠ 0).
 * A 512-bit species on an AVX2 machine is not intrinsified and runs ~20× slower, so the shapes
 * must follow the hardware; with fewer than 8 float lanes the kernels fall back to scalar code.
 */
public final class Lanes {
    private Lanes() {
    }

    /**
     * Float lanes per vector: 16 or 8 (the codes' 16-byte units split evenly either way).
     * {@code -Dqlab.vector.lanes=8|16} ({@link VectorSupport#FORCED_LANES}) overrides the hardware
     * choice, here and in the engine's kernels (the dequantized tile among them), so the other
     * shape's kernels can be tested (slowly, emulated) on any machine.
     */
    public static final int COUNT = chooseCount();

    /** Whether the CPU has vectors of at least {@link #COUNT} float lanes. */
    public static final boolean SUPPORTED = FloatVector.SPECIES_PREFERRED.length() >= 8;

    static final VectorSpecies<Float> FLOATS = COUNT == 16 ? FloatVector.SPECIES_512 : FloatVector.SPECIES_256;
    static final VectorSpecies<Integer> INTS = COUNT == 16 ? IntVector.SPECIES_512 : IntVector.SPECIES_256;
    static final VectorSpecies<Byte> BYTES = VectorSpecies.of(byte.class, VectorShape.forBitSize(COUNT * 8));
    static final VectorSpecies<Short> SHORTS = VectorSpecies.of(short.class, VectorShape.forBitSize(COUNT * 16));

    private static int chooseCount() {
        if (VectorSupport.FORCED_LANES != 0) {
            return VectorSupport.FORCED_LANES;
        }
        return FloatVector.SPECIES_PREFERRED.length() >= 16 ? 16 : 8;
    }

    /** Lanes summed in index order: fixed, unlike reduceLanes, so every kernel agrees bitwise. */
    static float sumInOrder(FloatVector v) {
        float s = 0;
        for (int i = 0; i < COUNT; i++) {
            s += v.lane(i);
        }
        return s;
    }
}
