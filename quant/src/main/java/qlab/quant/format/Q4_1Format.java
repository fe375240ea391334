package qlab.quant.format;

import java.util.Optional;
import qlab.quant.ggml.GgmlCodec;
import qlab.quant.ggml.GgmlType;
import qlab.quant.ggml.PlanarBlockCodec;
import qlab.quant.kernel.CodeGrid;

/**
 * q4_1: per 32-value block an fp16 scale d, an fp16 minimum m and codes q in 0..15 stored as
 * nibbles; value = d·q + m. Quantized by ggml's rules ({@link GgmlRule#Q4_1}): d = (max − min)/15,
 * m = min, q = (int) ((x − min)·(1/d) + 0.5f); with importance ggml's 37-candidate (scale, min) search.
 * Row: fp16 d × ceil(cols/32) | fp16 m × ceil(cols/32) | nibbles × cols rounded up to 32
 * = (2 + 2 + 16) B / 32 weights = 5 bpw. The bytes are ggml's Q4_1 blocks (d, m, qs), planes gathered.
 */
public final class Q4_1Format extends BlockCodeFormat {
    public static final int GROUP = 32;

    public Q4_1Format() {
        super("q4_1", GROUP, GROUP, CodeGrid.Q4U, GgmlRule.Q4_1);
    }

    @Override
    public Optional<GgmlCodec> ggml() {
        return Optional.of(PlanarBlockCodec.inOrder(GgmlType.Q4_1, 2, 2, 16));
    }
}
