package qlab.quant.format;

import java.util.Optional;
import qlab.quant.ggml.GgmlCodec;
import qlab.quant.ggml.GgmlType;
import qlab.quant.ggml.PlanarBlockCodec;
import qlab.quant.kernel.CodeGrid;

/**
 * q4_0: per group of g values (32, 64 or 128) a signed fp16 scale d = m / −8 (m the value of
 * largest magnitude, with its sign, which lands exactly on the grid's long end −8) and levels
 * −8..7 stored as nibbles level + 8. Quantized by ggml's rules ({@link GgmlRule#Q4_0}): codes
 * (int) (x · (1/d) + 8.5f) against the unrounded f32 scale, so ties round upward; with importance
 * ggml's 19-candidate scale search. At g = 32 the bytes are ggml's Q4_0 blocks, planes gathered.
 * Row: fp16 d × ceil(cols/g) | nibbles × cols rounded up to 32.
 * At g = 32: (2 + 16) B / 32 weights = 4.5 bpw; g = 64: 4.25; g = 128: 4.125.
 */
public final class Q4_0Format extends BlockCodeFormat {
    public static final int DEFAULT_GROUP = 32;

    public Q4_0Format(int group) {
        super("q4_0", group, DEFAULT_GROUP, CodeGrid.Q4, GgmlRule.Q4_0);
    }

    /** At g = 32 a row is ggml's Q4_0 row with the fp16 scales gathered in front: the same bytes, moved. */
    @Override
    public Optional<GgmlCodec> ggml() {
        return groupSize() == DEFAULT_GROUP ? Optional.of(PlanarBlockCodec.inOrder(GgmlType.Q4_0, 2, 16)) : Optional.empty();
    }
}
