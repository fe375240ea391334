package qlab.pipeline;

import java.io.Serializable;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * How to quantize a model: a base format for every weight matrix, optionally other formats for
 * classes of tensors (e.g. {@code attn -> q8_0}).
 *
 * @param format    base format name, e.g. {@code q4_8}
 * @param groupSize block (group) size applied to every grouped format in the mix; null when all
 *                  formats in the mix are per-row (f32, f16, bf16, int8)
 * @param overrides tensor class ({@code attn}, {@code ffn_down}, {@code lm_head}, ...) to format, sorted by class
 */
public record QuantSpec(String format, Integer groupSize, Map<String, String> overrides) implements Serializable {

    public QuantSpec {
        overrides = new TreeMap<>(overrides);
    }

    /** The mix in the sweep file's short form, e.g. {@code q4_8+attn=q8_0}, without the group size. */
    public String mixName() {
        if (overrides.isEmpty()) {
            return format;
        }
        return format + "+" + overrides.entrySet().stream()
                .map(e -> e.getKey() + "=" + e.getValue())
                .collect(Collectors.joining("+"));
    }
}
