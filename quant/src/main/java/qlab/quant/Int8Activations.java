package qlab.quant;

/**
 * Activations quantized once per product for the integer kernels: per block of {@code block}
 * values (the weights' scale block, 32/64/128) one f32 scale max|x|/127 and int8 codes in
 * [-127, 127], rounded half away from zero. The last block of a row may be partial.
 */
public final class Int8Activations {
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

    /** Quantizes x[xOffset + t * cols + j] for t in [0, tokens), j in [0, cols). */
    public static Int8Activations quantize(float[] x, int xOffset, int cols, int tokens, int block) {
        if (block <= 0) {
            throw new IllegalArgumentException("activation block must be positive, got " + block);
        }
        Int8Activations a = new Int8Activations(tokens, cols, block);
        for (int t = 0; t < tokens; t++) {
            int rowIn = xOffset + t * cols;
            for (int b = 0; b < a.blocksPerRow; b++) {
                int start = b * block;
                int end = Math.min(cols, start + block);
                float amax = 0;
                for (int j = start; j < end; j++) {
                    amax = Math.max(amax, Math.abs(x[rowIn + j]));
                }
                float d = amax / 127f;
                a.scales[t * a.blocksPerRow + b] = d;
                for (int j = start; j < end; j++) {
                    int q = d == 0 ? 0 : Rounding.halfAwayFromZero(x[rowIn + j] / d);
                    a.codes[t * cols + j] = (byte) Math.max(-127, Math.min(127, q));
                }
            }
        }
        return a;
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
