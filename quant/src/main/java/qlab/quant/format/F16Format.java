package qlab.quant.format;

import java.util.Optional;
import qlab.quant.ggml.GgmlCodec;
import qlab.quant.ggml.GgmlType;
import qlab.quant.ggml.SameBytesCodec;
import qlab.quant.kernel.FloatWeights;

/**
 * f16 (IEEE binary16): 2 bytes per value, 16 bits per weight. Narrowing rounds to nearest even,
 * as every converter that writes f16 checkpoints does, so values here match theirs; magnitudes
 * above 65504 saturate to ±65504 rather than becoming infinite.
 */
public final class F16Format extends FloatFormat {
    public F16Format() {
        super("f16", FloatWeights.Element.F16);
    }

    @Override
    short narrow(float v) {
        return Float.floatToFloat16(Math.max(-65504f, Math.min(65504f, v)));
    }

    @Override
    public Optional<GgmlCodec> ggml() {
        return Optional.of(new SameBytesCodec(GgmlType.F16));
    }
}
