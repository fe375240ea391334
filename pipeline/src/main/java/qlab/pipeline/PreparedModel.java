package qlab.pipeline;

import java.io.Serializable;

/**
 * A model ready for quantization and evaluation.
 *
 * @param modelId        human-readable identity (e.g. the preset and seed, or the directory name)
 * @param modelHash      content hash of the weights and config: two runs agree on it only for the same model
 * @param parameterCount number of weights
 * @param location       where the evaluator keeps the prepared model (a directory or file path)
 */
public record PreparedModel(String modelId, String modelHash, long parameterCount, String location)
        implements Serializable {
}
