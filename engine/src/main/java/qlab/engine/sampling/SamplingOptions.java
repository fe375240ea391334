package qlab.engine.sampling;

import java.util.ArrayList;
import java.util.List;
import qlab.engine.QlabException;

/**
 * Generation settings as given, each {@code null} when not given: the command-line flags, or flags with a model's
 * {@code generation_config.json} defaults filled in ({@link GenerationDefaults#applyTo}).
 */
public record SamplingOptions(Boolean doSample, Double temperature, Integer topK, Double topP, Double minP,
                              Double repetitionPenalty, Integer maxNewTokens) {

    public SamplingOptions {
        if (maxNewTokens != null && maxNewTokens < 0) {
            throw new QlabException("sampling: \"max_new_tokens\" must be >= 0, got " + maxNewTokens);
        }
    }

    public static SamplingOptions none() {
        return new SamplingOptions(null, null, null, null, null, null, null);
    }

    /**
     * The sampler settings these options mean. Whether to sample: {@code doSample} if given, otherwise only when a
     * temperature above 0 is given (with nothing given, decoding is greedy, as transformers' default
     * {@code do_sample=False}). A temperature of 0 always means greedy. Sampling without a temperature uses 1.
     * Filters not given are off; the repetition penalty applies to greedy decoding too.
     */
    public SamplingConfig toConfig(long seed) {
        boolean sample = doSample != null ? doSample : temperature != null && temperature > 0.0;
        double t = temperature != null ? temperature : 1.0;
        if (!sample) {
            t = 0.0;
        }
        return new SamplingConfig(t,
                topK != null ? topK : 0,
                topP != null ? topP : 1.0,
                minP != null ? minP : 0.0,
                repetitionPenalty != null ? repetitionPenalty : 1.0,
                seed);
    }

    /** The given settings in generation_config.json spelling, e.g. {@code temperature=0.7 top_k=20}; "" if none. */
    public String describe() {
        List<String> parts = new ArrayList<>();
        if (doSample != null) {
            parts.add("do_sample=" + doSample);
        }
        if (temperature != null) {
            parts.add("temperature=" + SamplingConfig.number(temperature));
        }
        if (topK != null) {
            parts.add("top_k=" + topK);
        }
        if (topP != null) {
            parts.add("top_p=" + SamplingConfig.number(topP));
        }
        if (minP != null) {
            parts.add("min_p=" + SamplingConfig.number(minP));
        }
        if (repetitionPenalty != null) {
            parts.add("repetition_penalty=" + SamplingConfig.number(repetitionPenalty));
        }
        if (maxNewTokens != null) {
            parts.add("max_new_tokens=" + maxNewTokens);
        }
        return String.join(" ", parts);
    }
}
