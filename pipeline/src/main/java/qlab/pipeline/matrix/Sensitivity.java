package qlab.pipeline.matrix;

import java.io.Serializable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import qlab.engine.QlabException;
import qlab.engine.model.ModelConfig;
import qlab.engine.model.ModelManifest;
import qlab.engine.synthetic.SyntheticPreset;
import qlab.pipeline.ModelSpec;
import qlab.quant.checkpoint.QuantPlan;
import qlab.quant.ggml.LlamaRecipe.Kind;

/**
 * A sensitivity sweep ({@code mode: sensitivity}): every tensor group quantized alone in each
 * candidate format, every other matrix kept in the reference format, so that each row measures what
 * one group in one format costs. Each group is a quantization-plan selector, so a row's mix is an
 * ordinary plan ({@code f32+L3.q=q4_0}) that runs through the sweep like any other.
 *
 * @param reference the format every matrix outside the group keeps (f32: the KL then is the group's alone)
 * @param grouping  how matrices are grouped
 */
public record Sensitivity(String reference, Grouping grouping) implements Serializable {

    /** How the sweep groups matrices; the embedding and the (untied) head are a group each in every grouping. */
    public enum Grouping {
        /** Each matrix of each layer: {@code L0.q}, {@code L0.k}, …, {@code L23.down}. */
        TENSOR,
        /** Each kind of matrix across all layers: {@code q}, {@code k}, …, {@code down}. */
        KIND,
        /** All matrices of one layer: {@code L0}, …, {@code L23}. */
        LAYER;

        public String yamlName() {
            return name().toLowerCase(Locale.ROOT);
        }

        public static Grouping fromYaml(String name) {
            for (Grouping g : values()) {
                if (g.yamlName().equals(name)) {
                    return g;
                }
            }
            return null;
        }
    }

    /**
     * A group of weight matrices that the sweep quantizes together.
     *
     * @param id      its quantization-plan selector ({@code L3.q}, {@code down}, {@code L3}, {@code emb}, {@code head})
     * @param tensors the Hugging Face names of its matrices
     * @param weights how many weights they hold
     */
    public record TensorGroup(String id, List<String> tensors, long weights) implements Serializable {
    }

    /** The groups of a model of this config, in layer order, the embedding first and the head last. */
    public List<TensorGroup> groups(ModelConfig config) {
        List<String> ids = new ArrayList<>();
        ids.add("emb");
        switch (grouping) {
            case TENSOR -> {
                for (int layer = 0; layer < config.numLayers(); layer++) {
                    for (Kind k : QuantPlan.LAYER_KINDS) {
                        ids.add("L" + layer + "." + QuantPlan.kindName(k));
                    }
                }
            }
            case KIND -> QuantPlan.LAYER_KINDS.forEach(k -> ids.add(QuantPlan.kindName(k)));
            case LAYER -> {
                for (int layer = 0; layer < config.numLayers(); layer++) {
                    ids.add("L" + layer);
                }
            }
        }
        ids.add("head");
        Map<String, long[]> matrices = ModelManifest.of(config).expected();
        List<TensorGroup> groups = new ArrayList<>();
        for (String id : ids) {
            QuantPlan.Selector selector = QuantPlan.selectors(id).getFirst();
            List<String> tensors = new ArrayList<>();
            long weights = 0;
            for (Map.Entry<String, long[]> e : matrices.entrySet()) {
                if (e.getValue().length == 2 && e.getKey().endsWith(".weight") && selector.matches(e.getKey())) {
                    tensors.add(e.getKey());
                    weights += e.getValue()[0] * e.getValue()[1];
                }
            }
            if (!tensors.isEmpty()) { // a tied head is the embedding: no group of its own
                groups.add(new TensorGroup(id, List.copyOf(tensors), weights));
            }
        }
        return groups;
    }

    /** The shape of the model a sweep names, read without loading any weights. */
    public static ModelConfig modelConfig(ModelSpec model) {
        if (model.isPreset()) {
            return SyntheticPreset.byId(model.preset()).config();
        }
        Path dir = Path.of(model.path());
        if (!Files.isDirectory(dir)) {
            throw new QlabException(dir + ": a sensitivity sweep needs a preset or a Hugging Face directory (a GGUF file's "
                    + "matrices are already quantized)");
        }
        return ModelConfig.read(dir);
    }
}
