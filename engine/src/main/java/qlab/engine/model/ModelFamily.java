package qlab.engine.model;

import java.util.Arrays;
import java.util.stream.Collectors;
import qlab.engine.QlabException;

/**
 * The Hugging Face architectures this engine computes. They share one forward pass; what differs
 * between them is data in {@link ModelConfig}: which projections carry biases, whether q and k
 * are RMS-normalised per head, and how the config spells those choices.
 *
 * <ul>
 *   <li>{@code qwen2}: q/k/v biases always, none on o_proj or the MLP.
 *   <li>{@code llama}: q/k/v/o biases when {@code attention_bias}, gate/up/down biases when {@code mlp_bias}.
 *   <li>{@code qwen3}: q/k/v/o biases when {@code attention_bias}; {@code q_norm}/{@code k_norm} after
 *       the projections, before RoPE; no MLP biases.
 * </ul>
 */
public enum ModelFamily {
    QWEN2("qwen2", "Qwen2ForCausalLM"),
    LLAMA("llama", "LlamaForCausalLM"),
    QWEN3("qwen3", "Qwen3ForCausalLM");

    private final String modelType;
    private final String architecture;

    ModelFamily(String modelType, String architecture) {
        this.modelType = modelType;
        this.architecture = architecture;
    }

    /** The config's {@code model_type}. */
    public String modelType() {
        return modelType;
    }

    /** The transformers class, as in the config's {@code architectures}. */
    public String architecture() {
        return architecture;
    }

    public static ModelFamily byModelType(String modelType) {
        for (ModelFamily f : values()) {
            if (f.modelType.equals(modelType)) {
                return f;
            }
        }
        // Quoted and escaped: the value comes from the file and must not break the one-line message.
        throw new QlabException("config.json: field \"model_type\" is " + new com.fasterxml.jackson.databind.node.TextNode(modelType) + "; supported: "
                + Arrays.stream(values()).map(f -> "\"" + f.modelType + "\"").collect(Collectors.joining(", ")));
    }
}
