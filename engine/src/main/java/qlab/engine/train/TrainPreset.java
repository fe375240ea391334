package qlab.engine.train;

import java.util.Arrays;
import java.util.stream.Collectors;
import qlab.engine.QlabException;
import qlab.engine.model.ModelConfig;

/**
 * Model shapes for {@code qlab train --preset}. The vocabulary is the tokenizer's, filled in when
 * the tokenizer is known; embeddings are tied (at these sizes the embedding is a large share of
 * the parameters, and tying halves it).
 */
public enum TrainPreset {
    /** Seconds per hundred steps: smoke tests. */
    TINY("tiny", 64, 192, 2, 4, 2, 16),
    /** About 1 M parameters besides the embedding. */
    S("s", 192, 512, 4, 6, 2, 32),
    /** About 4.5 M parameters besides the embedding. */
    M("m", 256, 768, 6, 8, 2, 32),
    /** About 11 M parameters besides the embedding. */
    L("l", 384, 1024, 6, 6, 2, 64);

    /** Longest context the written config.json declares. */
    public static final int MAX_POSITIONS = 4096;

    private final String id;
    private final int hidden;
    private final int intermediate;
    private final int layers;
    private final int heads;
    private final int kvHeads;
    private final int headDim;

    TrainPreset(String id, int hidden, int intermediate, int layers, int heads, int kvHeads, int headDim) {
        this.id = id;
        this.hidden = hidden;
        this.intermediate = intermediate;
        this.layers = layers;
        this.heads = heads;
        this.kvHeads = kvHeads;
        this.headDim = headDim;
    }

    public String id() {
        return id;
    }

    /** The model config for a tokenizer of {@code vocab} tokens. */
    public ModelConfig config(int vocab) {
        return new ModelConfig(hidden, intermediate, layers, heads, kvHeads, headDim, vocab, 1e-6, 10000.0, true,
                MAX_POSITIONS, "bfloat16");
    }

    public static TrainPreset byId(String id) {
        for (TrainPreset p : values()) {
            if (p.id.equals(id)) {
                return p;
            }
        }
        throw new QlabException("train: --preset \"" + id + "\" is unknown; known: "
                + Arrays.stream(values()).map(TrainPreset::id).collect(Collectors.joining(", ")));
    }
}
