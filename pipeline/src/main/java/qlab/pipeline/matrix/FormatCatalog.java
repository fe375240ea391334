package qlab.pipeline.matrix;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * What the sweep needs to know about weight formats before any is run: which group sizes each
 * supports and whether it quantizes at all (only then does an importance matrix change anything).
 * {@link #traits} is the single question the expansion asks, so that this table can later be answered
 * by the quantizers' own registry without touching anything else.
 */
public final class FormatCatalog {

    /**
     * @param groupSizes supported block sizes; empty for per-row formats, which take no group size
     * @param quantized  false for the float formats (f32, f16, bf16), which an importance matrix cannot change
     */
    public record Traits(List<Integer> groupSizes, boolean quantized) {
        public boolean perRow() {
            return groupSizes.isEmpty();
        }
    }

    /** Tensor classes a mix may give their own format. */
    public static final Set<String> TENSOR_CLASSES = Set.of(
            "attn", "attn_q", "attn_k", "attn_v", "attn_o",
            "ffn", "ffn_gate", "ffn_up", "ffn_down",
            "embed", "lm_head");

    private static final Map<String, Traits> FORMATS = new LinkedHashMap<>();

    static {
        List<Integer> perRow = List.of();
        FORMATS.put("f32", new Traits(perRow, false));
        FORMATS.put("f16", new Traits(perRow, false));
        FORMATS.put("bf16", new Traits(perRow, false));
        FORMATS.put("int8", new Traits(perRow, true));
        FORMATS.put("q8_0", new Traits(List.of(32, 64, 128), true));
        FORMATS.put("q4_0", new Traits(List.of(32, 64, 128), true));
        FORMATS.put("q2_0", new Traits(List.of(32, 128), true));
        FORMATS.put("tq2_0", new Traits(List.of(32, 128), true));
        FORMATS.put("b1_0", new Traits(List.of(32, 128), true));
        FORMATS.put("q4_8", new Traits(List.of(128), true));
        FORMATS.put("q4_8g64", new Traits(List.of(64), true));
        FORMATS.put("q2_8", new Traits(List.of(128), true));
        FORMATS.put("tq2_8", new Traits(List.of(128), true));
        FORMATS.put("b1_8", new Traits(List.of(128), true));
    }

    private FormatCatalog() {
    }

    /** The traits of a format, or empty when no such format exists. */
    public static Optional<Traits> traits(String format) {
        return Optional.ofNullable(FORMATS.get(format));
    }

    /** Every known format name, in a fixed order (for error messages). */
    public static List<String> names() {
        return List.copyOf(FORMATS.keySet());
    }
}
