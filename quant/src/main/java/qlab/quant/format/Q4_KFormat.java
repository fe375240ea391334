package qlab.quant.format;

import qlab.quant.ggml.GgmlType;
import qlab.quant.kernel.SubBlockWeights;

/**
 * q4_k: llama.cpp's Q4_K, stored as its blocks. Per 256 values: fp16 d | fp16 dmin | 12 B of 6-bit
 * scales and mins for eight 32-value sub-blocks | 128 B of nibbles (bytes 32c .. 32c + 31 hold
 * sub-block 2c in their low nibbles and 2c + 1 in their high nibbles)
 * = 144 B / 256 weights = 4.5 bpw. Value = (d × sc) × q − (dmin × m), q in 0..15.
 *
 * <p>The kernels read the nibbles in place and the sub-blocks' scales and mins widened once to
 * f32: 0.81 bytes per weight per pass (the blocks, 0.56, and the f32 scales and mins).
 */
public final class Q4_KFormat extends ScaleMinKFormat {
    public Q4_KFormat() {
        super("q4_k", GgmlType.Q4_K, 4);
    }

    @Override
    float plainRmin() {
        return -1f;
    }

    @Override
    int plainSteps() {
        return 20;
    }

    @Override
    boolean clampsImportanceScales() {
        return false;
    }

    @Override
    void packCodes(int[] L, byte[] out) {
        for (int j = 0; j < 256; j += 64) {
            for (int l = 0; l < 32; l++) {
                out[16 + j / 2 + l] = (byte) (L[j + l] | (L[j + l + 32] << 4));
            }
        }
    }

    @Override
    int level(byte[] in, int j) {
        int c = j / 64;
        int q = u8(in, 16 + 32 * c + (j & 31));
        return (j & 32) == 0 ? q & 0xF : q >> 4;
    }

    @Override
    InPlace inPlace() {
        return SubBlockWeights::q4kInPlace;
    }
}
