package qlab.quant.format;

import qlab.quant.ggml.GgmlType;

/**
 * iq4_nl: llama.cpp's IQ4_NL, stored as its blocks. Per 32 values: fp16 d | 16 B of 4-bit indices
 * into the non-linear grid {−127, −104, −83, −65, −49, −35, −22, −10, 1, 13, 25, 38, 53, 69, 89, 113}
 * (value j in the low nibble of byte j, value j + 16 in the high) = 18 B / 32 weights = 4.5 bpw.
 * Value = d × K[index]. Quantizer: {@link Iq4Search} on each block.
 */
public final class IQ4_NLFormat extends SuperBlockFormat {
    public IQ4_NLFormat() {
        super("iq4_nl", GgmlType.IQ4_NL);
    }

    @Override
    void quantizeBlock(float[] x, int xOff, float[] qw, int qwOff, byte[] out) {
        Iq4Search.Result r = Iq4Search.quantize(32, x, xOff, qw, qwOff);
        putFp16(out, 0, r.d());
        Iq4Search.packCodes(r.codes(), 0, out, 2);
    }

    @Override
    public boolean hasMins() {
        return false;
    }

    @Override
    void decodeBlock(byte[] in, float[] scales, float[] mins, int sOff, byte[] levels, int lOff) {
        float d = fp16At(in, 0);
        scales[sOff] = d;
        scales[sOff + 1] = d;
        mins[sOff] = 0f;
        mins[sOff + 1] = 0f;
        Iq4Search.unpackLevels(in, 2, levels, lOff);
    }
}
