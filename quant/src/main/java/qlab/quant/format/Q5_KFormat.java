package qlab.quant.format;

import qlab.quant.ggml.GgmlType;
import qlab.quant.kernel.SubBlockWeights;

/**
 * q5_k: llama.cpp's Q5_K, stored as its blocks. Per 256 values: fp16 d | fp16 dmin | 12 B of 6-bit
 * scales and mins | 32 B of fifth bits (bit s of byte l: value l of sub-block s) | 128 B of low
 * nibbles placed as q4_k's = 176 B / 256 weights = 5.5 bpw. Value = (d × sc) × q − (dmin × m),
 * q in 0..31. The kernels read the blocks in place, with the sub-blocks' scales and mins widened
 * once to f32: 0.94 bytes per weight per pass.
 */
public final class Q5_KFormat extends ScaleMinKFormat {
    public Q5_KFormat() {
        super("q5_k", GgmlType.Q5_K, 5);
    }

    @Override
    float plainRmin() {
        return -0.5f;
    }

    @Override
    int plainSteps() {
        return 15;
    }

    @Override
    boolean clampsImportanceScales() {
        return true;
    }

    @Override
    void packCodes(int[] L, byte[] out) {
        int m1 = 1;
        int m2 = 2;
        for (int n = 0; n < 256; n += 64) {
            for (int j = 0; j < 32; j++) {
                int l1 = L[n + j];
                if (l1 > 15) {
                    l1 -= 16;
                    out[16 + j] |= (byte) m1;
                }
                int l2 = L[n + j + 32];
                if (l2 > 15) {
                    l2 -= 16;
                    out[16 + j] |= (byte) m2;
                }
                out[48 + n / 2 + j] = (byte) (l1 | (l2 << 4));
            }
            m1 <<= 2;
            m2 <<= 2;
        }
    }

    @Override
    int level(byte[] in, int j) {
        int c = j / 64;
        int l = j & 31;
        int q = u8(in, 48 + 32 * c + l);
        int sub = j / 32;
        int low = (j & 32) == 0 ? q & 0xF : q >> 4;
        return low + (((u8(in, 16 + l) >> sub) & 1) << 4);
    }

    @Override
    InPlace inPlace() {
        return SubBlockWeights::q5kInPlace;
    }
}
