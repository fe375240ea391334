package qlab.quant.format;

import java.util.Optional;
import qlab.quant.ggml.GgmlCodec;
import qlab.quant.ggml.GgmlType;
import qlab.quant.ggml.PlanarBlockCodec;
import qlab.quant.kernel.CodeGrid;

/**
 * q5_1: per 32-value block an fp16 scale d, an fp16 minimum m and 5-bit codes q in 0..31 (low 4
 * bits as nibbles, fifth bits in a plane, as q5_0); value = d·q + m. Quantized by ggml's rules
 * ({@link GgmlRule#Q5_1}): d = (max − min)/31, m = min, q = (int) ((x − min)·(1/d) + 0.5f); with
 * importance ggml's 37-candidate (scale, min) search.
 * Row: fp16 d × ceil(cols/32) | fp16 m × ceil(cols/32) | nibbles | high bits
 * = (2 + 2 + 16 + 4) B / 32 weights = 6 bpw. The bytes are ggml's Q5_1 blocks (d, m, qh, qs), planes gathered.
 */
public final class Q5_1Format extends BlockCodeFormat {
    public static final int GROUP = 32;

    public Q5_1Format() {
        super("q5_1", GROUP, GROUP, CodeGrid.Q5U, GgmlRule.Q5_1);
    }

    @Override
    public Optional<GgmlCodec> ggml() {
        return Optional.of(new PlanarBlockCodec(GgmlType.Q5_1, new int[] {2, 2, 16, 4}, new int[] {0, 1, 3, 2}));
    }
}
