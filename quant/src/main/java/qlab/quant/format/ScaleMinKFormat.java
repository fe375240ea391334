package qlab.quant.format;

import static qlab.quant.format.GgmlSearch.fromFp16;
import static qlab.quant.format.GgmlSearch.makeQkx2Quants;
import static qlab.quant.format.GgmlSearch.makeQkx3Quants;
import static qlab.quant.format.GgmlSearch.makeQpQuants;
import static qlab.quant.format.GgmlSearch.nearestInt;
import static qlab.quant.format.GgmlSearch.sqrtf;
import static qlab.quant.format.GgmlSearch.toFp16;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import qlab.quant.PackedWeights;
import qlab.quant.ggml.GgmlType;

/**
 * q4_k and q5_k: 256-value superblocks of eight 32-value sub-blocks, each with a 6-bit scale and a
 * 6-bit min under the superblock's fp16 d and dmin; value = (d × sc) × q − (dmin × m), q in
 * 0..2^bits − 1. Block: fp16 d | fp16 dmin | 12 B of packed 6-bit scales and mins | codes.
 *
 * <p>Quantizing (ggml's rules): without importance each sub-block gets make_qkx2_quants with weights
 * rms(sub-block) + |x|, and the 6-bit scales and mins are the sub-block values × 63 / their
 * maximum; with importance, weights qw × sqrt(σ² + x²) (σ² twice the superblock's mean square),
 * make_qkx3_quants, and the 6-bit values by make_qp_quants weighted by each sub-block's weight sum.
 * Then every value is requantized against the stored (fp16-rounded) scale and min.
 */
abstract class ScaleMinKFormat extends SuperBlockFormat {
    private final int nmax;

    ScaleMinKFormat(String name, GgmlType type, int bits) {
        super(name, type);
        this.nmax = (1 << bits) - 1;
    }

    /** Search parameters of the plain quantizer: rmin, rdelta, nstep of make_qkx2_quants. */
    abstract float plainRmin();

    abstract int plainSteps();

    /** Whether the importance path clamps the 6-bit values to 63 (q5_k does, q4_k does not). */
    abstract boolean clampsImportanceScales();

    /** Writes the 256 levels L (0..nmax) and d, dmin, scales into out. */
    abstract void packCodes(int[] L, byte[] out);

    /** Level of value j (0..255) of the block. */
    abstract int level(byte[] in, int j);

    @Override
    final void quantizeBlock(float[] x, int xOff, float[] qw, int qwOff, byte[] out) {
        int[] L = new int[256];
        int[] laux = new int[32];
        float[] weights = new float[32];
        float[] scales = new float[8];
        float[] mins = new float[8];
        int[] ls = new int[8];
        int[] lm = new int[8];
        short d;
        short dmin;
        if (qw == null) {
            float maxScale = 0;
            float maxMin = 0;
            for (int j = 0; j < 8; j++) {
                int o = xOff + 32 * j;
                float sumX2 = 0;
                for (int l = 0; l < 32; l++) {
                    sumX2 += x[o + l] * x[o + l];
                }
                float avX = sqrtf(sumX2 / 32);
                for (int l = 0; l < 32; l++) {
                    weights[l] = avX + Math.abs(x[o + l]);
                }
                scales[j] = makeQkx2Quants(32, nmax, x, o, weights, L, 32 * j, mins, j, laux, plainRmin(), 0.1f,
                        plainSteps(), false);
                if (scales[j] > maxScale) {
                    maxScale = scales[j];
                }
                if (mins[j] > maxMin) {
                    maxMin = mins[j];
                }
            }
            float invScale = maxScale > 0 ? 63f / maxScale : 0f;
            float invMin = maxMin > 0 ? 63f / maxMin : 0f;
            for (int j = 0; j < 8; j++) {
                ls[j] = Math.min(63, nearestInt(invScale * scales[j]) & 0xFF);
                lm[j] = Math.min(63, nearestInt(invMin * mins[j]) & 0xFF);
            }
            d = toFp16(maxScale / 63f);
            dmin = toFp16(maxMin / 63f);
        } else {
            float sumX2 = 0;
            for (int l = 0; l < 256; l++) {
                sumX2 += x[xOff + l] * x[xOff + l];
            }
            float sigma2 = 2 * sumX2 / 256;
            float[] sw = new float[8];
            for (int j = 0; j < 8; j++) {
                int o = xOff + 32 * j;
                for (int l = 0; l < 32; l++) {
                    weights[l] = qw[qwOff + 32 * j + l] * sqrtf(sigma2 + x[o + l] * x[o + l]);
                }
                float sumW = 0;
                for (int l = 0; l < 32; l++) {
                    sumW += weights[l];
                }
                sw[j] = sumW;
                scales[j] = makeQkx3Quants(32, nmax, x, o, weights, L, 32 * j, mins, j, laux, -0.9f, 0.05f, 36);
            }
            float dBlock = makeQpQuants(8, 63, scales, ls, sw);
            float mBlock = makeQpQuants(8, 63, mins, lm, sw);
            if (clampsImportanceScales()) {
                for (int j = 0; j < 8; j++) {
                    ls[j] = Math.min(63, ls[j]);
                    lm[j] = Math.min(63, lm[j]);
                }
            }
            d = toFp16(dBlock);
            dmin = toFp16(mBlock);
        }
        int[] sc = new int[12];
        for (int j = 0; j < 8; j++) {
            if (j < 4) {
                sc[j] = ls[j];
                sc[j + 4] = lm[j];
            } else {
                sc[j + 4] = (ls[j] & 0xF) | ((lm[j] & 0xF) << 4);
                sc[j - 4] |= (ls[j] >> 4) << 6;
                sc[j] |= (lm[j] >> 4) << 6;
            }
        }
        for (int i = 0; i < 12; i++) {
            out[4 + i] = (byte) sc[i];
        }
        putFp16(out, 0, d);
        putFp16(out, 2, dmin);

        float dF = fromFp16(d);
        float dminF = fromFp16(dmin);
        for (int j = 0; j < 8; j++) {
            float dd = dF * scaleK4(out, j);
            if (dd == 0) {
                continue;
            }
            float dm = dminF * minK4(out, j);
            for (int ii = 0; ii < 32; ii++) {
                int l = nearestInt((x[xOff + 32 * j + ii] + dm) / dd);
                L[32 * j + ii] = Math.max(0, Math.min(nmax, l));
            }
        }
        packCodes(L, out);
    }

    /** A kernel reading the stored blocks in place, given the f32 scales and mins of every 32 values. */
    interface InPlace {
        PackedWeights of(MemorySegment data, long rowBytes, int rows, int cols, int stride, float[] scales, float[] mins);
    }

    /** This type's in-place kernel. */
    abstract InPlace inPlace();

    /** The stored blocks read in place; each sub-block's scale d × sc and min dmin × m widened once. */
    @Override
    public final PackedWeights pack(MemorySegment data, int rows, int cols) {
        int blocks = (cols + 255) / 256;
        int blockBytes = type().typeSize;
        long rowBytes = bytesPerRow(cols);
        float[] scales = new float[rows * blocks * 8];
        float[] mins = new float[rows * blocks * 8];
        byte[] in = new byte[16];
        for (int r = 0; r < rows; r++) {
            for (int b = 0; b < blocks; b++) {
                MemorySegment.copy(data, ValueLayout.JAVA_BYTE, r * rowBytes + (long) blockBytes * b, in, 0, in.length);
                float d = fp16At(in, 0);
                float dmin = fp16At(in, 2);
                for (int j = 0; j < 8; j++) {
                    int at = (r * blocks + b) * 8 + j;
                    scales[at] = d * scaleK4(in, j);
                    mins[at] = dmin * minK4(in, j);
                }
            }
        }
        return inPlace().of(data, rowBytes, rows, cols, blocks * 256, scales, mins);
    }

    @Override
    public final boolean packsCopy() {
        return false;
    }

    /** The 6-bit scale of sub-block j (get_scale_min_k4); the block's scales start at byte 4. */
    static int scaleK4(byte[] in, int j) {
        return j < 4 ? u8(in, 4 + j) & 63 : (u8(in, 4 + j + 4) & 0xF) | ((u8(in, 4 + j - 4) >> 6) << 4);
    }

    /** The 6-bit min of sub-block j. */
    static int minK4(byte[] in, int j) {
        return j < 4 ? u8(in, 4 + j + 4) & 63 : (u8(in, 4 + j + 4) >> 4) | ((u8(in, 4 + j) >> 6) << 4);
    }

    @Override
    public boolean hasMins() {
        return true;
    }

    @Override
    final void decodeBlock(byte[] in, float[] scales, float[] mins, int sOff, byte[] levels, int lOff) {
        float d = fp16At(in, 0);
        float dmin = fp16At(in, 2);
        for (int j = 0; j < 8; j++) {
            float scale = d * scaleK4(in, j);
            float min = dmin * minK4(in, j);
            scales[sOff + 2 * j] = scale;
            scales[sOff + 2 * j + 1] = scale;
            mins[sOff + 2 * j] = min;
            mins[sOff + 2 * j + 1] = min;
        }
        for (int j = 0; j < 256; j++) {
            levels[lOff + j] = (byte) level(in, j);
        }
    }
}
