package qlab.quant.format;

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
}
