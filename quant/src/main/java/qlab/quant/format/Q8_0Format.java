package qlab.quant.format;

import java.util.Optional;
import qlab.quant.ggml.GgmlCodec;
import qlab.quant.ggml.GgmlType;
import qlab.quant.ggml.PlanarBlockCodec;
import qlab.quant.kernel.CodeGrid;

/**
 * q8_0: per group of g values (32, 64 or 128) an fp16 scale d = max|x| / 127 and g int8 codes.
 * Quantized by ggml's rule ({@link GgmlRule#Q8_0}): codes roundf(x · (1/d)), against the unrounded
 * f32 scale, ties away from zero; importance is ignored, as ggml ignores it for Q8_0. (qlab's former
 * rule, rounding against the stored fp16 scale, measured within 3% in KL of this one on
 * qwen2.5-0.5b, either way depending on the activations: not kept.)
 * Row: fp16 d × ceil(cols/g) | int8 codes × cols rounded up to 32.
 * At g = 32: (2 + 32) B / 32 weights = 8.5 bpw; g = 64: 8.25; g = 128: 8.125.
 */
public final class Q8_0Format extends BlockCodeFormat {
    public static final int DEFAULT_GROUP = 32;

    public Q8_0Format(int group) {
        super("q8_0", group, DEFAULT_GROUP, CodeGrid.INT8, GgmlRule.Q8_0);
    }

    /** At g = 32 a row is ggml's Q8_0 row with the fp16 scales gathered in front: the same bytes, moved. */
    @Override
    public Optional<GgmlCodec> ggml() {
        return groupSize() == DEFAULT_GROUP ? Optional.of(PlanarBlockCodec.inOrder(GgmlType.Q8_0, 2, 32)) : Optional.empty();
    }
}
