package qlab.pipeline;

import java.io.Serializable;
import java.util.List;

/**
 * How throughput is measured.
 *
 * @param promptPath     text the prompts are cut from (the evaluation text)
 * @param prefillTokens  prompt length for the prefill measurement
 * @param decodeTokens   tokens generated per decode measurement
 * @param repeats        repetitions of each measurement (decode reports median, min and max over them)
 * @param batchSizes     batch sizes for the batched measurement; empty when batching was not asked for
 */
public record ThroughputSettings(String promptPath, int prefillTokens, int decodeTokens, int repeats,
                                 List<Integer> batchSizes) implements Serializable {
    public ThroughputSettings {
        batchSizes = List.copyOf(batchSizes);
    }
}
