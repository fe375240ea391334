package qlab.quant.format;

import java.util.Optional;
import qlab.quant.ggml.GgmlCodec;
import qlab.quant.ggml.GgmlType;
import qlab.quant.ggml.PlanarBlockCodec;
import qlab.quant.kernel.CodeGrid;

/**
 * q5_0: per 32-value block a signed fp16 scale d = m / −16 (m the value of largest magnitude) and
 * levels −16..15 as 5-bit codes level + 16: their low 4 bits as nibbles, their fifth bits in a
 * plane of one bit per value (ggml's {@code qh}). Quantized by ggml's rules ({@link GgmlRule#Q5_0}):
 * codes (int) (x·(1/d) + 16.5f), ties upward; with importance ggml's 19-candidate scale search.
 * Row: fp16 d × ceil(cols/32) | nibbles × cols rounded up to 32 | high bits × cols rounded up to 32
 * = (2 + 16 + 4) B / 32 weights = 5.5 bpw. The bytes are ggml's Q5_0 blocks (d, qh, qs), planes gathered.
 */
public final class Q5_0Format extends BlockCodeFormat {
    public static final int GROUP = 32;

    public Q5_0Format() {
        super("q5_0", GROUP, GROUP, CodeGrid.Q5, GgmlRule.Q5_0);
    }

    @Override
    public Optional<GgmlCodec> ggml() {
        return Optional.of(new PlanarBlockCodec(GgmlType.Q5_0, new int[] {2, 16, 4}, new int[] {0, 2, 1}));
    }
}
