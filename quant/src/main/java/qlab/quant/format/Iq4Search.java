package qlab.quant.format;

import static qlab.quant.format.GgmlSearch.GROUP_MAX_EPS;
import static qlab.quant.format.GgmlSearch.IQ4_VALUES;
import static qlab.quant.format.GgmlSearch.bestIndex;
import static qlab.quant.format.GgmlSearch.nearestInt;
import static qlab.quant.format.GgmlSearch.sqrtf;

/**
 * ggml's quantize_row_iq4_nl_impl for IQ4_NL (one 32-value block) and IQ4_XS (a 256-value
 * superblock of eight), with its ntry = 7 search (what llama-quantize runs, with or without
 * importance weights; without, each value is weighted by its square).
 *
 * <p>Per 32 values: weights qw × sqrt(σ² + x²) (σ² twice the superblock's mean square) or x²;
 * the scale starts at max / −127 (max the value of largest magnitude), codes are the nearest grid
 * levels, and 15 trial scales (itry − 127) / max, itry = −7..7, compete on the weighted
 * least-squares fit. IQ4_XS then stores each block's scale as a signed 6-bit multiple of
 * d = −(the block scale of largest magnitude) / 32 and re-picks the codes against d × l.
 */
final class Iq4Search {
    private static final int NTRY = 7;
    private static final int BLOCK = 32;

    private Iq4Search() {
    }

    /** The result of one superblock: the codes L (grid indices), the fp16 d, the 6-bit scales (IQ4_XS). */
    record Result(int[] codes, short d, int[] scaleLevels) {
    }

    static Result quantize(int superBlock, float[] x, int xOff, float[] qw, int qwOff) {
        float sigma2 = 0;
        for (int j = 0; j < superBlock; j++) {
            sigma2 += x[xOff + j] * x[xOff + j];
        }
        sigma2 *= 2f / superBlock;
        int nb = superBlock / BLOCK;
        int[] L = new int[superBlock];
        float[] scales = new float[nb];
        float[] weight = new float[BLOCK];
        float maxScale = 0;
        float amaxScale = 0;
        for (int ib = 0; ib < nb; ib++) {
            int xb = xOff + ib * BLOCK;
            for (int j = 0; j < BLOCK; j++) {
                float v = x[xb + j];
                weight[j] = qw != null ? qw[qwOff + ib * BLOCK + j] * sqrtf(sigma2 + v * v) : v * v;
            }
            float max = GgmlSearch.largestMagnitude(x, xb, BLOCK);
            if (Math.abs(max) < GROUP_MAX_EPS) {
                scales[ib] = 0;
                continue;
            }
            float d = -max / IQ4_VALUES[0];
            float id = 1 / d;
            float sumqx = 0;
            float sumq2 = 0;
            for (int j = 0; j < BLOCK; j++) {
                int l = bestIndex(IQ4_VALUES, id * x[xb + j]);
                L[ib * BLOCK + j] = l;
                float q = IQ4_VALUES[l];
                float w = weight[j];
                sumqx += w * q * x[xb + j];
                sumq2 += w * q * q;
            }
            d = sumq2 > 0 ? sumqx / sumq2 : 0f;
            float best = d * sumqx;
            for (int itry = -NTRY; itry <= NTRY; itry++) {
                id = (itry + IQ4_VALUES[0]) / max;
                sumqx = 0;
                sumq2 = 0;
                for (int j = 0; j < BLOCK; j++) {
                    float q = IQ4_VALUES[bestIndex(IQ4_VALUES, id * x[xb + j])];
                    float w = weight[j];
                    sumqx += w * q * x[xb + j];
                    sumq2 += w * q * q;
                }
                if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
                    d = sumqx / sumq2;
                    best = d * sumqx;
                }
            }
            scales[ib] = d;
            float absD = Math.abs(d);
            if (absD > amaxScale) {
                amaxScale = absD;
                maxScale = d;
            }
        }

        if (nb > 1) {
            int[] scaleLevels = new int[nb];
            float d = -maxScale / 32;
            short dh = GgmlSearch.toFp16(d);
            float id = d != 0 ? 1 / d : 0f;
            for (int ib = 0; ib < nb; ib++) {
                int l = Math.max(-32, Math.min(31, nearestInt(id * scales[ib])));
                float dl = d * l;
                float idl = dl != 0 ? 1 / dl : 0f;
                for (int j = 0; j < BLOCK; j++) {
                    L[ib * BLOCK + j] = bestIndex(IQ4_VALUES, idl * x[xOff + ib * BLOCK + j]);
                }
                scaleLevels[ib] = l + 32;
            }
            return new Result(L, dh, scaleLevels);
        }
        short dh = GgmlSearch.toFp16(scales[0]);
        float id = scales[0] != 0 ? 1 / scales[0] : 0;
        for (int j = 0; j < superBlock; j++) {
            L[j] = bestIndex(IQ4_VALUES, id * x[xOff + j]);
        }
        return new Result(L, dh, null);
    }

    /** Codes of 32 values as 16 bytes: value j in the low nibble of byte j, value j + 16 in the high. */
    static void packCodes(int[] L, int from, byte[] out, int at) {
        for (int j = 0; j < 16; j++) {
            out[at + j] = (byte) (L[from + j] | (L[from + 16 + j] << 4));
        }
    }

    /** Grid levels of 32 values from their 16 code bytes. */
    static void unpackLevels(byte[] in, int at, byte[] levels, int lOff) {
        for (int j = 0; j < 16; j++) {
            int q = in[at + j] & 0xFF;
            levels[lOff + j] = IQ4_VALUES[q & 0xF];
            levels[lOff + j + 16] = IQ4_VALUES[q >> 4];
        }
    }
}
