package qlab.quant.format;

import static qlab.quant.format.GgmlSearch.GROUP_MAX_EPS;
import static qlab.quant.format.GgmlSearch.fromFp16;
import static qlab.quant.format.GgmlSearch.makeQxQuants;
import static qlab.quant.format.GgmlSearch.nearestInt;
import static qlab.quant.format.GgmlSearch.toFp16;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import qlab.quant.PackedWeights;
import qlab.quant.ggml.GgmlType;
import qlab.quant.kernel.SubBlockWeights;

/**
 * q6_k: llama.cpp's Q6_K, stored as its blocks. Per 256 values: 128 B of low nibbles | 64 B of
 * high bit pairs | 16 int8 scales, one per 16 values | fp16 d = 210 B / 256 weights = 6.5625 bpw.
 * Value = (d × sc) × (q − 32), q in 0..63. In each half of 128 values, value l (l < 32) takes the
 * low nibble of ql[l], l + 32 that of ql[l + 32], l + 64 and l + 96 their high nibbles; qh[l]
 * holds the four values' high bit pairs from the lowest up. The kernels read the blocks in place,
 * with each 16 values' scale d × sc widened once to f32: 1.07 bytes per weight per pass.
 *
 * <p>Quantizing (ggml's rules): each 16 values get make_qx_quants (32 levels each side, weights x²
 * or the importance weights), the scales are stored as round(−128 × scale / (the scale of largest
 * magnitude)) capped at 127 under d, and every value is requantized against its stored scale.
 */
public final class Q6_KFormat extends SuperBlockFormat {
    public Q6_KFormat() {
        super("q6_k", GgmlType.Q6_K);
    }

    @Override
    void quantizeBlock(float[] x, int xOff, float[] qw, int qwOff, byte[] out) {
        int[] L = new int[256];
        float[] scales = new float[16];
        float maxScale = 0;
        float maxAbsScale = 0;
        for (int ib = 0; ib < 16; ib++) {
            float scale = makeQxQuants(16, 32, x, xOff + 16 * ib, L, 16 * ib, qw, qwOff + 16 * ib);
            scales[ib] = scale;
            float abs = Math.abs(scale);
            if (abs > maxAbsScale) {
                maxAbsScale = abs;
                maxScale = scale;
            }
        }
        if (maxAbsScale < GROUP_MAX_EPS) {
            return; // the whole block zero, d = 0
        }
        float iscale = -128f / maxScale;
        short d = toFp16(1 / iscale);
        putFp16(out, 208, d);
        for (int ib = 0; ib < 16; ib++) {
            out[192 + ib] = (byte) Math.min(127, nearestInt(iscale * scales[ib]));
        }
        float dF = fromFp16(d);
        for (int j = 0; j < 16; j++) {
            float dd = dF * out[192 + j];
            if (dd == 0) {
                continue;
            }
            for (int ii = 0; ii < 16; ii++) {
                int l = nearestInt(x[xOff + 16 * j + ii] / dd);
                L[16 * j + ii] = Math.max(-32, Math.min(31, l)) + 32;
            }
        }
        for (int j = 0; j < 256; j += 128) {
            int ql = j / 2;
            int qh = 128 + j / 4;
            for (int l = 0; l < 32; l++) {
                int q1 = L[j + l] & 0xF;
                int q2 = L[j + l + 32] & 0xF;
                int q3 = L[j + l + 64] & 0xF;
                int q4 = L[j + l + 96] & 0xF;
                out[ql + l] = (byte) (q1 | (q3 << 4));
                out[ql + l + 32] = (byte) (q2 | (q4 << 4));
                out[qh + l] = (byte) ((L[j + l] >> 4) | ((L[j + l + 32] >> 4) << 2) | ((L[j + l + 64] >> 4) << 4)
                        | ((L[j + l + 96] >> 4) << 6));
            }
        }
    }

    @Override
    public boolean hasMins() {
        return false;
    }

    /** The stored blocks read in place; each 16 values' scale d × sc widened once. */
    @Override
    public PackedWeights pack(MemorySegment data, int rows, int cols) {
        int blocks = (cols + 255) / 256;
        long rowBytes = bytesPerRow(cols);
        float[] scales = new float[rows * blocks * 16];
        byte[] tail = new byte[18];
        for (int r = 0; r < rows; r++) {
            for (int b = 0; b < blocks; b++) {
                MemorySegment.copy(data, ValueLayout.JAVA_BYTE, r * rowBytes + 210L * b + 192, tail, 0, tail.length);
                float d = fp16At(tail, 16);
                for (int s = 0; s < 16; s++) {
                    scales[(r * blocks + b) * 16 + s] = d * tail[s];
                }
            }
        }
        return SubBlockWeights.q6kInPlace(data, rowBytes, rows, cols, blocks * 256, scales);
    }

    @Override
    public boolean packsCopy() {
        return false;
    }

    @Override
    void decodeBlock(byte[] in, float[] scales, float[] mins, int sOff, byte[] levels, int lOff) {
        float d = fp16At(in, 208);
        for (int s = 0; s < 16; s++) {
            scales[sOff + s] = d * in[192 + s];
            mins[sOff + s] = 0f;
        }
        for (int h = 0; h < 2; h++) {
            for (int l = 0; l < 32; l++) {
                int ql0 = u8(in, 64 * h + l);
                int ql1 = u8(in, 64 * h + l + 32);
                int qh = u8(in, 128 + 32 * h + l);
                int o = lOff + 128 * h + l;
                levels[o] = (byte) (((ql0 & 0xF) | ((qh & 3) << 4)) - 32);
                levels[o + 32] = (byte) (((ql1 & 0xF) | (((qh >> 2) & 3) << 4)) - 32);
                levels[o + 64] = (byte) (((ql0 >> 4) | (((qh >> 4) & 3) << 4)) - 32);
                levels[o + 96] = (byte) (((ql1 >> 4) | (((qh >> 6) & 3) << 4)) - 32);
            }
        }
    }
}
