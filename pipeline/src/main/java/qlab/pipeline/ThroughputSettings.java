package qlab.pipeline;

import java.io.Serializable;
import java.util.List;

/**
 * How throughput is measured.
 *
 * @param promptPath    text the prompts are cut from (the evaluation text)
 * @param singleStream  whether to measure single-stream prefill and decode
 * @param prefillTokens prompt length for the prefill measurement (0 when single-stream is not measured)
 * @param decodeTokens  tokens generated per decode measurement, single-stream and batched
 * @param repeats       repetitions of each measurement (decode reports median, min and max over them)
 * @param batchSizes    batch sizes for the batched measurement; empty when batching was not asked for
 */
public record ThroughputSettings(String promptPath, boolean singleStream, int prefillTokens, int decodeTokens,
                                 int repeats, List<Integer> batchSizes) implements Serializable {
    public ThroughputSettings {
        batchSizes = List.copyOf(batchSizes);
    }

    public boolean batched() {
        return !batchSizes.isEmpty();
    }
}
