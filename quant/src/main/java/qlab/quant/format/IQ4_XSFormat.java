package qlab.quant.format;

import qlab.quant.ggml.GgmlType;

/**
 * iq4_xs: llama.cpp's IQ4_XS, stored as its blocks. Per 256 values: fp16 d | u16 high bit pairs
 * of eight 6-bit block scales | 4 B of their low nibbles | 128 B of IQ4_NL-placed grid indices,
 * 16 B per 32-value block = 136 B / 256 weights = 4.25 bpw. Value = (d × (ls − 32)) × K[index].
 * Quantizer: {@link Iq4Search} on each superblock.
 */
public final class IQ4_XSFormat extends SuperBlockFormat {
    public IQ4_XSFormat() {
        super("iq4_xs", GgmlType.IQ4_XS);
    }

    @Override
    void quantizeBlock(float[] x, int xOff, float[] qw, int qwOff, byte[] out) {
        Iq4Search.Result r = Iq4Search.quantize(256, x, xOff, qw, qwOff);
        putFp16(out, 0, r.d());
        int high = 0;
        for (int ib = 0; ib < 8; ib++) {
            int l = r.scaleLevels()[ib];
            out[4 + ib / 2] |= (byte) ((l & 0xF) << (4 * (ib % 2)));
            high |= (l >> 4) << (2 * ib);
            Iq4Search.packCodes(r.codes(), 32 * ib, out, 8 + 16 * ib);
        }
        out[2] = (byte) high;
        out[3] = (byte) (high >> 8);
    }

    @Override
    public boolean hasMins() {
        return false;
    }

    @Override
    void decodeBlock(byte[] in, float[] scales, float[] mins, int sOff, byte[] levels, int lOff) {
        float d = fp16At(in, 0);
        int high = u8(in, 2) | (u8(in, 3) << 8);
        for (int ib = 0; ib < 8; ib++) {
            int ls = ((u8(in, 4 + ib / 2) >> (4 * (ib % 2))) & 0xF) | (((high >> (2 * ib)) & 3) << 4);
            float dl = d * (ls - 32);
            scales[sOff + 2 * ib] = dl;
            scales[sOff + 2 * ib + 1] = dl;
            mins[sOff + 2 * ib] = 0f;
            mins[sOff + 2 * ib + 1] = 0f;
            Iq4Search.unpackLevels(in, 8 + 16 * ib, levels, lOff + 32 * ib);
        }
    }
}
