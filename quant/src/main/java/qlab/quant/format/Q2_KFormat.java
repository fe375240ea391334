package qlab.quant.format;

import static qlab.quant.format.GgmlSearch.fromFp16;
import static qlab.quant.format.GgmlSearch.makeQkx2Quants;
import static qlab.quant.format.GgmlSearch.makeQkx3Quants;
import static qlab.quant.format.GgmlSearch.makeQpQuants;
import static qlab.quant.format.GgmlSearch.nearestInt;
import static qlab.quant.format.GgmlSearch.sqrtf;
import static qlab.quant.format.GgmlSearch.toFp16;

import qlab.quant.ggml.GgmlType;

/**
 * q2_k: llama.cpp's Q2_K, stored as its blocks. Per 256 values: 16 B of 4-bit scale (low nibble)
 * and min (high nibble) per 16 values | 64 B of 2-bit codes | fp16 d | fp16 dmin
 * = 84 B / 256 weights = 2.625 bpw. Value = (d × sc) × q − (dmin × m), q in 0..3. Code placement:
 * in each half of 128 values, value 32k + 16b + l sits in bits 2k of byte 32h + 16b + l.
 *
 * <p>Quantizing (ggml's rules): without importance make_qkx2_quants per 16 values (weights |x|,
 * absolute error) and scales and mins × 15 / their maximum; with importance make_qkx3_quants
 * under weights qw × sqrt(σ² + x²) and the 4-bit values by make_qp_quants.
 */
public final class Q2_KFormat extends SuperBlockFormat {
    public Q2_KFormat() {
        super("q2_k", GgmlType.Q2_K);
    }

    @Override
    void quantizeBlock(float[] x, int xOff, float[] qw, int qwOff, byte[] out) {
        int[] L = new int[256];
        int[] laux = new int[16];
        float[] weights = new float[16];
        float[] scales = new float[16];
        float[] mins = new float[16];
        int[] sc = new int[16];
        short d;
        short dmin;
        if (qw == null) {
            float maxScale = 0;
            float maxMin = 0;
            for (int j = 0; j < 16; j++) {
                int o = xOff + 16 * j;
                for (int l = 0; l < 16; l++) {
                    weights[l] = Math.abs(x[o + l]);
                }
                scales[j] = makeQkx2Quants(16, 3, x, o, weights, L, 16 * j, mins, j, laux, -0.5f, 0.1f, 15, true);
                if (scales[j] > maxScale) {
                    maxScale = scales[j];
                }
                if (mins[j] > maxMin) {
                    maxMin = mins[j];
                }
            }
            if (maxScale > 0) {
                float iscale = 15f / maxScale;
                for (int j = 0; j < 16; j++) {
                    sc[j] = nearestInt(iscale * scales[j]) & 0xFF;
                }
                d = toFp16(maxScale / 15f);
            } else {
                d = toFp16(0f);
            }
            if (maxMin > 0) {
                float iscale = 15f / maxMin;
                for (int j = 0; j < 16; j++) {
                    sc[j] = (sc[j] | (nearestInt(iscale * mins[j]) << 4)) & 0xFF;
                }
                dmin = toFp16(maxMin / 15f);
            } else {
                dmin = toFp16(0f);
            }
        } else {
            float sumX2 = 0;
            for (int j = 0; j < 256; j++) {
                sumX2 += x[xOff + j] * x[xOff + j];
            }
            float sigma2 = sumX2 / 256;
            float[] sw = new float[16];
            for (int j = 0; j < 16; j++) {
                int o = xOff + 16 * j;
                for (int l = 0; l < 16; l++) {
                    weights[l] = qw[qwOff + 16 * j + l] * sqrtf(sigma2 + x[o + l] * x[o + l]);
                }
                for (int l = 0; l < 16; l++) {
                    sw[j] += weights[l];
                }
                scales[j] = makeQkx3Quants(16, 3, x, o, weights, L, 16 * j, mins, j, laux, -0.9f, 0.05f, 36);
            }
            int[] ls = new int[16];
            int[] lm = new int[16];
            float dm = makeQpQuants(16, 15, scales, ls, sw);
            float mm = makeQpQuants(16, 15, mins, lm, sw);
            d = toFp16(dm);
            dmin = toFp16(mm);
            for (int j = 0; j < 16; j++) {
                sc[j] = (ls[j] | (lm[j] << 4)) & 0xFF;
            }
        }
        for (int j = 0; j < 16; j++) {
            out[j] = (byte) sc[j];
        }
        putFp16(out, 80, d);
        putFp16(out, 82, dmin);

        float dF = fromFp16(d);
        float dminF = fromFp16(dmin);
        for (int j = 0; j < 16; j++) {
            float dd = dF * (sc[j] & 0xF);
            if (dd == 0) {
                continue;
            }
            float m = dminF * (sc[j] >> 4);
            for (int ii = 0; ii < 16; ii++) {
                int l = nearestInt((x[xOff + 16 * j + ii] + m) / dd);
                L[16 * j + ii] = Math.max(0, Math.min(3, l));
            }
        }
        for (int j = 0; j < 256; j += 128) {
            for (int l = 0; l < 32; l++) {
                out[16 + j / 4 + l] = (byte) (L[j + l] | (L[j + l + 32] << 2) | (L[j + l + 64] << 4) | (L[j + l + 96] << 6));
            }
        }
    }

    @Override
    public boolean hasMins() {
        return true;
    }

    @Override
    void decodeBlock(byte[] in, float[] scales, float[] mins, int sOff, byte[] levels, int lOff) {
        float d = fp16At(in, 80);
        float dmin = fp16At(in, 82);
        for (int g = 0; g < 16; g++) {
            int sc = u8(in, g);
            scales[sOff + g] = d * (sc & 0xF);
            mins[sOff + g] = dmin * (sc >> 4);
        }
        for (int p = 0; p < 256; p++) {
            int h = p / 128;
            int k = (p / 32) % 4;
            int b = (p / 16) % 2;
            int l = p % 16;
            levels[lOff + p] = (byte) ((u8(in, 16 + 32 * h + 16 * b + l) >> (2 * k)) & 3);
        }
    }
}
