package qlab.quant.format;

import static qlab.quant.format.GgmlSearch.fromFp16;
import static qlab.quant.format.GgmlSearch.makeQ3Quants;
import static qlab.quant.format.GgmlSearch.makeQxQuants;
import static qlab.quant.format.GgmlSearch.nearestInt;
import static qlab.quant.format.GgmlSearch.sqrtf;
import static qlab.quant.format.GgmlSearch.toFp16;

import qlab.quant.ggml.GgmlType;

/**
 * q3_k: llama.cpp's Q3_K, stored as its blocks. Per 256 values: 32 B of high bits (value j: bit
 * j / 32 of byte j % 32) | 64 B of 2-bit low parts (q2_k's placement) | 12 B of sixteen 6-bit
 * scales (low nibbles in bytes 0..7, high bit pairs in bytes 8..11) | fp16 d
 * = 110 B / 256 weights = 3.4375 bpw. Value = (d × (sc − 32)) × q, q in −4..3 (low part − 4
 * when the high bit is clear).
 *
 * <p>Quantizing (ggml's rules): without importance each 16 values get make_q3_quants and the
 * scales are stored as round(−32 × scale / (the scale of largest magnitude)); with importance
 * make_qx_quants under weights qw × sqrt(σ² + x²) and the 6-bit scales by make_qx_quants again.
 */
public final class Q3_KFormat extends SuperBlockFormat {
    public Q3_KFormat() {
        super("q3_k", GgmlType.Q3_K);
    }

    @Override
    void quantizeBlock(float[] x, int xOff, float[] qw, int qwOff, byte[] out) {
        int[] L = new int[256];
        float[] scales = new float[16];
        int[] sc = new int[12];
        short d;
        if (qw == null) {
            float maxScale = 0;
            float amax = 0;
            for (int j = 0; j < 16; j++) {
                scales[j] = makeQ3Quants(16, 4, x, xOff + 16 * j, L, 16 * j);
                float abs = Math.abs(scales[j]);
                if (abs > amax) {
                    amax = abs;
                    maxScale = scales[j];
                }
            }
            if (maxScale != 0) {
                float iscale = -32f / maxScale;
                for (int j = 0; j < 16; j++) {
                    int l = (byte) nearestInt(iscale * scales[j]);
                    packScale(sc, j, Math.max(-32, Math.min(31, l)) + 32);
                }
                d = toFp16(1 / iscale);
            } else {
                d = toFp16(0f);
            }
        } else {
            float sumX2 = 0;
            for (int j = 0; j < 256; j++) {
                sumX2 += x[xOff + j] * x[xOff + j];
            }
            float sigma2 = 2 * sumX2 / 256;
            float[] weight = new float[16];
            float[] sw = new float[16];
            for (int j = 0; j < 16; j++) {
                int o = xOff + 16 * j;
                for (int l = 0; l < 16; l++) {
                    weight[l] = qw[qwOff + 16 * j + l] * sqrtf(sigma2 + x[o + l] * x[o + l]);
                }
                float sumW = 0;
                for (int l = 0; l < 16; l++) {
                    sumW += weight[l];
                }
                sw[j] = sumW;
                scales[j] = makeQxQuants(16, 4, x, o, L, 16 * j, weight, 0);
            }
            int[] ls = new int[16];
            float dBlock = makeQxQuants(16, 32, scales, 0, ls, 0, sw, 0);
            for (int j = 0; j < 16; j++) {
                packScale(sc, j, ls[j]);
            }
            d = toFp16(dBlock);
        }
        for (int i = 0; i < 12; i++) {
            out[96 + i] = (byte) sc[i];
        }
        putFp16(out, 108, d);

        float dF = fromFp16(d);
        for (int j = 0; j < 16; j++) {
            float dd = dF * (scale6(out, j) - 32);
            if (dd == 0) {
                continue;
            }
            for (int ii = 0; ii < 16; ii++) {
                int l = nearestInt(x[xOff + 16 * j + ii] / dd);
                L[16 * j + ii] = Math.max(-4, Math.min(3, l)) + 4;
            }
        }
        for (int j = 0; j < 256; j++) {
            if (L[j] > 3) {
                out[j % 32] |= (byte) (1 << (j / 32));
                L[j] -= 4;
            }
        }
        for (int j = 0; j < 256; j += 128) {
            for (int l = 0; l < 32; l++) {
                out[32 + j / 4 + l] = (byte) (L[j + l] | (L[j + l + 32] << 2) | (L[j + l + 64] << 4) | (L[j + l + 96] << 6));
            }
        }
    }

    /** Stores the 6-bit scale l (0..63) of group j: low nibble, then the high bit pair. */
    private static void packScale(int[] sc, int j, int l) {
        if (j < 8) {
            sc[j] = l & 0xF;
        } else {
            sc[j - 8] |= (l & 0xF) << 4;
        }
        sc[j % 4 + 8] |= (l >> 4) << (2 * (j / 4));
    }

    /** The stored 6-bit scale of group j (0..63); the block's scales start at byte 96. */
    private static int scale6(byte[] in, int j) {
        int low = j < 8 ? u8(in, 96 + j) & 0xF : u8(in, 96 + j - 8) >> 4;
        return low | (((u8(in, 96 + 8 + j % 4) >> (2 * (j / 4))) & 3) << 4);
    }

    @Override
    public boolean hasMins() {
        return false;
    }

    @Override
    void decodeBlock(byte[] in, float[] scales, float[] mins, int sOff, byte[] levels, int lOff) {
        float d = fp16At(in, 108);
        for (int g = 0; g < 16; g++) {
            scales[sOff + g] = d * (scale6(in, g) - 32);
            mins[sOff + g] = 0f;
        }
        for (int p = 0; p < 256; p++) {
            int h = p / 128;
            int k = (p / 32) % 4;
            int b = (p / 16) % 2;
            int l = p % 16;
            int q = (u8(in, 32 + 32 * h + 16 * b + l) >> (2 * k)) & 3;
            boolean high = (u8(in, p % 32) & (1 << (p / 32))) != 0;
            levels[lOff + p] = (byte) (q - (high ? 0 : 4));
        }
    }
}
