package qlab.quant.format;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import qlab.quant.PackedWeights;
import qlab.quant.ggml.GgmlType;
import qlab.quant.kernel.SubBlockWeights;

/**
 * q4_k: llama.cpp's Q4_K, stored as its blocks. Per 256 values: fp16 d | fp16 dmin | 12 B of 6-bit
 * scales and mins for eight 32-value sub-blocks | 128 B of nibbles (bytes 32c .. 32c + 31 hold
 * sub-block 2c in their low nibbles and 2c + 1 in their high nibbles)
 * = 144 B / 256 weights = 4.5 bpw. Value = (d × sc) × q − (dmin × m), q in 0..15.
 *
 * <p>The kernels read the nibbles in place and the sub-blocks' scales and mins widened once to
 * f32: 0.75 bytes per weight per pass.
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
    public PackedWeights pack(MemorySegment data, int rows, int cols) {
        int blocks = (cols + 255) / 256;
        long rowBytes = bytesPerRow(cols);
        float[] scales = new float[rows * blocks * 8];
        float[] mins = new float[rows * blocks * 8];
        byte[] in = new byte[144];
        for (int r = 0; r < rows; r++) {
            for (int b = 0; b < blocks; b++) {
                MemorySegment.copy(data, ValueLayout.JAVA_BYTE, r * rowBytes + 144L * b, in, 0, 144);
                float d = fp16At(in, 0);
                float dmin = fp16At(in, 2);
                for (int j = 0; j < 8; j++) {
                    int at = (r * blocks + b) * 8 + j;
                    scales[at] = d * scaleK4(in, j);
                    mins[at] = dmin * minK4(in, j);
                }
            }
        }
        return SubBlockWeights.q4kInPlace(data, rowBytes, rows, cols, blocks * 256, scales, mins);
    }

    @Override
    public boolean packsCopy() {
        return false;
    }
}
