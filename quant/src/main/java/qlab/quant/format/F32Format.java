package qlab.quant.format;

import java.util.Optional;
import qlab.quant.ggml.GgmlCodec;
import qlab.quant.ggml.GgmlType;
import qlab.quant.ggml.SameBytesCodec;
import qlab.quant.kernel.FloatWeights;

/** f32: 4 bytes per value, 32 bits per weight. */
public final class F32Format extends FloatFormat {
    public F32Format() {
        super("f32", FloatWeights.Element.F32);
    }

    @Override
    short narrow(float v) {
        throw new UnsupportedOperationException("f32 is stored unnarrowed");
    }

    @Override
    public Optional<GgmlCodec> ggml() {
        return Optional.of(new SameBytesCodec(GgmlType.F32));
    }
}
