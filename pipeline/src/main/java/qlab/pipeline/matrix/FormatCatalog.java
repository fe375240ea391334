package qlab.pipeline.matrix;

import java.util.List;
import java.util.Optional;
import java.util.Set;
import qlab.engine.QlabException;
import qlab.quant.Formats;
import qlab.quant.checkpoint.QuantPlan;
import qlab.quant.ggml.LlamaRecipe;

/**
 * What the sweep needs to know about weight formats before any is run: which group sizes each
 * supports and whether it quantizes at all (only then does an importance matrix change anything).
 * Every answer comes from the quantizers' own registry ({@link Formats}) and plan roles
 * ({@link QuantPlan.Role}), so the sweep can never disagree with what the quantizer accepts.
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

    /** Tensor classes a mix may give their own format: the quantization plan's roles. */
    public static final Set<String> TENSOR_CLASSES = QuantPlan.roleNames();

    /**
     * Whether a mix may give these matrices their own format: a role ({@link #TENSOR_CLASSES}), a kind
     * of layer matrix or a layer's matrices, as the quantization plan's selectors accept them.
     */
    public static boolean isTensorSelector(String text) {
        return QuantPlan.isSelector(text);
    }

    private FormatCatalog() {
    }

    /**
     * The traits of a format, or empty when no such format exists. A llama.cpp named type
     * ({@code Q4_K_M}, …, {@link LlamaRecipe}) is a format here too: it takes no group size and
     * quantizes, so an importance matrix changes it.
     */
    public static Optional<Traits> traits(String format) {
        if (LlamaRecipe.byName(format).isPresent()) {
            return Optional.of(new Traits(List.of(), true));
        }
        try {
            List<Integer> groups = Formats.supportedGroupSizes(format).stream().filter(g -> g > 1).sorted().toList();
            return Optional.of(new Traits(groups, Formats.byName(format).isInteger()));
        } catch (QlabException unknown) {
            return Optional.empty();
        }
    }

    /** Every known format name, in the registry's order (for error messages). */
    public static List<String> names() {
        return Formats.names();
    }
}
