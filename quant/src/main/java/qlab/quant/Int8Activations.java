package qlab.quant;

import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;
import qlab.engine.util.WorkerPool;

/**
 * Activations quantized once per product for the integer kernels: per block of {@code block}
 * values (the weights' scale block, 32/64/128) one f32 scale max|x|/127 and int8 codes in
 * [-127, 127], rounded half away from zero. The last block of a row may be partial.
 */
public final class Int8Activations {
    private static final VectorSpecies<Float> FLOATS = FloatVector.SPECIES_256;
    private static final VectorSpecies<Integer> INTS = IntVector.SPECIES_256;
    private static final VectorSpecies<Byte> BYTES = ByteVector.SPECIES_64;
    private final int tokens;
    private final int cols;
    private final int block;
    private final int blocksPerRow;
    private final byte[] codes;   // [tokens, cols]
    private final float[] scales; // [tokens, blocksPerRow]

    private Int8Activations(int tokens, int cols, int block) {
        this.tokens = tokens;
        this.cols = cols;
        this.block = block;
        this.blocksPerRow = (cols + block - 1) / block;
        this.codes = new byte[tokens * cols];
        this.scales = new float[tokens * blocksPerRow];
    }

    /**
     * Quantizes x[xOffset + t * cols + j] for t in [0, tokens), j in [0, cols): whole blocks with
     * the Vector API, bitwise {@link #quantizeScalar} (the maximum is exact in any order, the
     * division is the same IEEE division, and the rounding below is exact).
     */
    public static Int8Activations quantize(float[] x, int xOffset, int cols, int tokens, int block) {
        return quantize(x, xOffset, cols, tokens, block, null);
    }

    /** {@link #quantize}, the tokens shared by the pool's threads (one thread if {@code pool} is null). */
    public static Int8Activations quantize(float[] x, int xOffset, int cols, int tokens, int block, WorkerPool pool) {
        Int8Activations a = allocate(cols, tokens, block);
        if (pool == null) {
            a.quantizeTokens(x, xOffset, 0, tokens);
        } else {
            pool.forRange(tokens, 1, (s, e) -> a.quantizeTokens(x, xOffset, s, e));
        }
        return a;
    }

    /** Tokens [from, to) of x into this one's codes and scales. */
    private void quantizeTokens(float[] x, int xOffset, int from, int to) {
        int lanes = FLOATS.length();
        for (int t = from; t < to; t++) {
            int rowIn = xOffset + t * cols;
            for (int b = 0; b < blocksPerRow; b++) {
                int start = b * block;
                if (block % lanes != 0 || start + block > cols) {
                    quantizeBlock(x, rowIn, t, b);
                    continue;
                }
                FloatVector max = FloatVector.zero(FLOATS);
                for (int j = start; j < start + block; j += lanes) {
                    max = max.max(FloatVector.fromArray(FLOATS, x, rowIn + j).abs());
                }
                float d = max.reduceLanes(VectorOperators.MAX) / 127f;
                scales[t * blocksPerRow + b] = d;
                if (d == 0) {
                    continue; // codes stay 0
                }
                for (int j = start; j < start + block; j += lanes) {
                    FloatVector v = FloatVector.fromArray(FLOATS, x, rowIn + j).div(d);
                    // Half away from zero, exactly: t = trunc|v|, and |v| - t is exact (Sterbenz).
                    FloatVector m = v.abs();
                    IntVector whole = (IntVector) m.convert(VectorOperators.F2I, 0);
                    FloatVector frac = m.sub((FloatVector) whole.convert(VectorOperators.I2F, 0));
                    IntVector r = whole.add(1, frac.compare(VectorOperators.GE, 0.5f).cast(INTS));
                    r = r.lanewise(VectorOperators.NEG, v.compare(VectorOperators.LT, 0f).cast(INTS)).min(127).max(-127);
                    ((ByteVector) r.convertShape(VectorOperators.I2B, BYTES, 0)).intoArray(codes, t * cols + j);
                }
            }
        }
    }

    /** The scalar reference of {@link #quantize}, value by value. */
    public static Int8Activations quantizeScalar(float[] x, int xOffset, int cols, int tokens, int block) {
        Int8Activations a = allocate(cols, tokens, block);
        for (int t = 0; t < tokens; t++) {
            for (int b = 0; b < a.blocksPerRow; b++) {
                a.quantizeBlock(x, xOffset + t * cols, t, b);
            }
        }
        return a;
    }

    private static Int8Activations allocate(int cols, int tokens, int block) {
        if (block <= 0) {
            throw new IllegalArgumentException("activation block must be positive, got " + block);
        }
        return new Int8Activations(tokens, cols, block);
    }

    private void quantizeBlock(float[] x, int rowIn, int t, int b) {
        int start = b * block;
        int end = Math.min(cols, start + block);
        float amax = 0;
        for (int j = start; j < end; j++) {
            amax = Math.max(amax, Math.abs(x[rowIn + j]));
        }
        float d = amax / 127f;
        scales[t * blocksPerRow + b] = d;
        for (int j = start; j < end; j++) {
            int q = d == 0 ? 0 : Rounding.halfAwayFromZero(x[rowIn + j] / d);
            codes[t * cols + j] = (byte) Math.max(-127, Math.min(127, q));
        }
    }

    public int tokens() {
        return tokens;
    }

    public int cols() {
        return cols;
    }

    public int block() {
        return block;
    }

    public int blocksPerRow() {
        return blocksPerRow;
    }

    /** Codes, row-major [tokens, cols]; shared, not copied: kernels read it directly. */
    public byte[] codes() {
        return codes;
    }

    /** Scales, row-major [tokens, blocksPerRow]; shared, not copied. */
    public float[] scales() {
        return scales;
    }

    /** The value the kernels multiply by: scale × code, into dst[dstOffset ..]. */
    public void dequantize(int token, float[] dst, int dstOffset) {
        for (int j = 0; j < cols; j++) {
            dst[dstOffset + j] = scales[token * blocksPerRow + j / block] * codes[token * cols + j];
        }
    }
}
