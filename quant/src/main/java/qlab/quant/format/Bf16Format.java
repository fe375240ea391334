package qlab.quant.format;

import java.util.Optional;
import qlab.quant.ggml.GgmlCodec;
import qlab.quant.ggml.GgmlType;
import qlab.quant.ggml.SameBytesCodec;
import qlab.quant.kernel.FloatWeights;

/**
 * bf16: the upper 16 bits of an f32, 16 bits per weight. Narrowing rounds to nearest even (what
 * PyTorch's {@code .to(torch.bfloat16)} does), so a bf16 written here equals a checkpoint's.
 */
public final class Bf16Format extends FloatFormat {
    public Bf16Format() {
        super("bf16", FloatWeights.Element.BF16);
    }

    @Override
    short narrow(float v) {
        int bits = Float.floatToRawIntBits(v);
        if (Float.isNaN(v)) {
            return (short) ((bits >>> 16) | 0x40); // keep it a (quiet) NaN
        }
        int rounded = bits + 0x7fff + ((bits >>> 16) & 1);
        return (short) (rounded >>> 16);
    }

    @Override
    public Optional<GgmlCodec> ggml() {
        return Optional.of(new SameBytesCodec(GgmlType.BF16));
    }
}
