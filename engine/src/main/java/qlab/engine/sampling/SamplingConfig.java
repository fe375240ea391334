package qlab.engine.sampling;

import java.util.Locale;
import qlab.engine.QlabException;

/**
 * How the next token is chosen from the last position's logits, with the meaning Hugging Face transformers gives
 * these settings in {@code generate()}.
 *
 * @param temperature       0 = greedy (argmax, lowest id on ties); otherwise scores are divided by
 *                          {@code (float) temperature} unless it is exactly 1
 * @param topK              0 = off; otherwise keep every score >= the k-th largest (ties at the boundary kept)
 * @param topP              1 = off; otherwise nucleus filtering with threshold {@code (float) (1 - topP)}
 * @param minP              0 = off; otherwise drop tokens whose probability is below {@code minP * maxProbability}
 * @param repetitionPenalty 1 = off; applied to every distinct id of the context (prompt and generated tokens),
 *                          also when decoding greedily, as transformers does
 * @param seed              seeds the draw; the same seed, logits and context give the same tokens
 */
public record SamplingConfig(double temperature, int topK, double topP, double minP, double repetitionPenalty,
                             long seed) {

    public SamplingConfig {
        // (float) of a tiny positive temperature is 0, which would divide by zero: require a positive float.
        if (!(temperature == 0.0 || ((float) temperature > 0f && Float.isFinite((float) temperature)))) {
            throw new QlabException("sampling: \"temperature\" must be 0 (greedy) or a positive finite number, got "
                    + temperature);
        }
        if (topK < 0) {
            throw new QlabException("sampling: \"top_k\" must be >= 0 (0 = off), got " + topK);
        }
        if (!(topP >= 0.0 && topP <= 1.0)) {
            throw new QlabException("sampling: \"top_p\" must be in [0, 1] (1 = off), got " + topP);
        }
        if (!(minP >= 0.0 && minP <= 1.0)) {
            throw new QlabException("sampling: \"min_p\" must be in [0, 1] (0 = off), got " + minP);
        }
        if (!((float) repetitionPenalty > 0f && Float.isFinite((float) repetitionPenalty))) {
            throw new QlabException("sampling: \"repetition_penalty\" must be a positive finite number (1 = off), got "
                    + repetitionPenalty);
        }
    }

    /** Argmax decoding with no penalty: what transformers does with {@code do_sample=False} and no processors. */
    public static SamplingConfig greedy() {
        return new SamplingConfig(0.0, 0, 1.0, 0.0, 1.0, 0L);
    }

    /** Plain sampling from the full softmax (temperature 1, no filters) with the given seed. */
    public static SamplingConfig unfiltered(long seed) {
        return new SamplingConfig(1.0, 0, 1.0, 0.0, 1.0, seed);
    }

    public boolean isGreedy() {
        return temperature == 0.0;
    }

    public SamplingConfig withTemperature(double value) {
        return new SamplingConfig(value, topK, topP, minP, repetitionPenalty, seed);
    }

    public SamplingConfig withTopK(int value) {
        return new SamplingConfig(temperature, value, topP, minP, repetitionPenalty, seed);
    }

    public SamplingConfig withTopP(double value) {
        return new SamplingConfig(temperature, topK, value, minP, repetitionPenalty, seed);
    }

    public SamplingConfig withMinP(double value) {
        return new SamplingConfig(temperature, topK, topP, value, repetitionPenalty, seed);
    }

    public SamplingConfig withRepetitionPenalty(double value) {
        return new SamplingConfig(temperature, topK, topP, minP, value, seed);
    }

    public SamplingConfig withSeed(long value) {
        return new SamplingConfig(temperature, topK, topP, minP, repetitionPenalty, value);
    }

    /** One line for logs, e.g. {@code sampling temperature=0.7 top_k=20 top_p=0.8 repetition_penalty=1.05 seed=42}. */
    public String describe() {
        StringBuilder line = new StringBuilder();
        if (isGreedy()) {
            line.append("greedy");
        } else {
            line.append("sampling temperature=").append(number(temperature));
            if (topK != 0) {
                line.append(" top_k=").append(topK);
            }
            if (topP < 1.0) {
                line.append(" top_p=").append(number(topP));
            }
            if (minP > 0.0) {
                line.append(" min_p=").append(number(minP));
            }
        }
        if (repetitionPenalty != 1.0) {
            line.append(" repetition_penalty=").append(number(repetitionPenalty));
        }
        if (!isGreedy()) {
            line.append(" seed=").append(seed);
        }
        return line.toString();
    }

    static String number(double value) {
        // Shortest round-trip form without a trailing ".0" on whole numbers: 0.7, 1, 1.05.
        if (value == Math.rint(value) && Math.abs(value) < 1e15) {
            return String.format(Locale.ROOT, "%d", (long) value);
        }
        return Double.toString(value);
    }
}
