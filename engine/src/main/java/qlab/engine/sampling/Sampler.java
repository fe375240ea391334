package qlab.engine.sampling;

import java.util.Arrays;

/**
 * Chooses the next token from the last position's logits, reproducing what Hugging Face transformers'
 * {@code generate()} does with the same settings, in its order:
 * <ol>
 *   <li>repetition penalty ({@code RepetitionPenaltyLogitsProcessor}), a logits processor, so it also applies to
 *       greedy decoding;</li>
 *   <li>greedy decoding stops here: argmax, lowest id on ties;</li>
 *   <li>temperature ({@code TemperatureLogitsWarper}) if T != 1;</li>
 *   <li>top-k ({@code TopKLogitsWarper}) if k != 0;</li>
 *   <li>top-p ({@code TopPLogitsWarper}) if p &lt; 1;</li>
 *   <li>min-p ({@code MinPLogitsWarper}) if set: transformers' {@code _get_logits_processor} appends it right
 *       after top-p (and before typical-p, epsilon and eta), so min-p sees the distribution already cut by top-k and
 *       top-p, renormalised over the survivors;</li>
 *   <li>a draw from the softmax of the surviving scores.</li>
 * </ol>
 * transformers draws with {@code torch.multinomial}, whose random stream cannot be reproduced here; the draw uses
 * xoshiro256** and {@link StrictMath#exp}, so a seed gives the same tokens on every JVM and platform.
 *
 * <p>Not thread-safe: one sampler per generated sequence. Its scratch buffers are sized to the vocabulary on first
 * use, so a step allocates nothing.
 */
public final class Sampler {
    private final SamplingConfig config;
    private final Xoshiro256StarStar random;

    private int vocab = -1;
    private float[] scores;         // [vocab] processed scores; -inf = filtered out
    private int[] order;            // [vocab] token ids sorted ascending by score, ties by id
    private int[] orderScratch;     // [vocab]
    private int[] keys;             // [vocab] radix keys of the scores, in step with order
    private int[] keysScratch;      // [vocab]
    private double[] weights;       // [vocab] exp(score - max) of the current pass
    private long[] seen;            // [ceil(vocab / 64)] bitset of context ids, all clear between calls
    private final int[] byteCounts = new int[256];

    public Sampler(SamplingConfig config) {
        this.config = config;
        this.random = new Xoshiro256StarStar(config.seed());
    }

    public SamplingConfig config() {
        return config;
    }

    /**
     * The next token id.
     *
     * @param logits        [vocab] scores of the last position (not modified)
     * @param context       ids the repetition penalty looks at: prompt and generated tokens so far
     * @param contextLength how many leading entries of {@code context} are valid
     */
    public int sample(float[] logits, int[] context, int contextLength) {
        process(logits, context, contextLength);
        return config.isGreedy() ? argmax() : draw();
    }

    public int sample(float[] logits, int[] context) {
        return sample(logits, context, context.length);
    }

    /**
     * The scores after every processor and warper, {@code -inf} where filtered out (transformers' {@code scores}
     * just before the softmax of the draw). For greedy decoding these are the penalised logits.
     */
    public float[] processedScores(float[] logits, int[] context, int contextLength) {
        process(logits, context, contextLength);
        return Arrays.copyOf(scores, vocab);
    }

    /**
     * Ascending ids the draw can pick: scores that are not {@code -inf} after processing. For greedy decoding the
     * single argmax. Does not consume randomness.
     */
    public int[] survivors(float[] logits, int[] context, int contextLength) {
        process(logits, context, contextLength);
        if (config.isGreedy()) {
            return new int[] {argmax()};
        }
        int count = 0;
        for (int i = 0; i < vocab; i++) {
            if (scores[i] != Float.NEGATIVE_INFINITY) {
                count++;
            }
        }
        int[] kept = new int[count];
        int next = 0;
        for (int i = 0; i < vocab; i++) {
            if (scores[i] != Float.NEGATIVE_INFINITY) {
                kept[next++] = i;
            }
        }
        return kept;
    }

    // ---------------------------------------------------------------- processing pipeline

    private void process(float[] logits, int[] context, int contextLength) {
        if (logits.length == 0) {
            throw new IllegalArgumentException("empty logits");
        }
        if (contextLength < 0 || contextLength > context.length) {
            throw new IllegalArgumentException("contextLength " + contextLength + " outside [0, " + context.length + "]");
        }
        ensureScratch(logits.length);
        System.arraycopy(logits, 0, scores, 0, vocab);
        if (config.repetitionPenalty() != 1.0) {
            applyRepetitionPenalty(context, contextLength);
        }
        if (config.isGreedy()) {
            return;
        }
        if (config.temperature() != 1.0) {
            // transformers divides the float32 scores by the Python float, i.e. by (float) T; a multiply by the
            // reciprocal would differ in the last bit.
            float t = (float) config.temperature();
            for (int i = 0; i < vocab; i++) {
                scores[i] = scores[i] / t;
            }
        }
        boolean sorted = false;
        if (config.topK() != 0) {
            sortAscending();
            sorted = true;
            applyTopK();
        }
        if (config.topP() < 1.0) {
            if (!sorted) {
                sortAscending();
            }
            // After top-k the order is still ascending: the entries it set to -inf were the smallest.
            applyTopP();
        }
        if (config.minP() > 0.0) {
            applyMinP();
        }
    }

    private void ensureScratch(int size) {
        if (size == vocab) {
            return;
        }
        vocab = size;
        scores = new float[size];
        order = new int[size];
        orderScratch = new int[size];
        keys = new int[size];
        keysScratch = new int[size];
        weights = new double[size];
        seen = new long[(size + 63) >>> 6];
    }

    /** Each distinct context id once: negative scores times the penalty, others divided by it. */
    private void applyRepetitionPenalty(int[] context, int contextLength) {
        float penalty = (float) config.repetitionPenalty();
        try {
            for (int c = 0; c < contextLength; c++) {
                int id = context[c];
                if (id < 0 || id >= vocab) {
                    throw new IllegalArgumentException("context id " + id + " at position " + c
                            + " is outside the vocabulary [0, " + vocab + ")");
                }
                long bit = 1L << id;
                if ((seen[id >>> 6] & bit) != 0) {
                    continue;
                }
                seen[id >>> 6] |= bit;
                float s = scores[id];
                scores[id] = s < 0f ? s * penalty : s / penalty;
            }
        } finally {
            Arrays.fill(seen, 0L);
        }
    }

    /** Keeps every score >= the k-th largest, so ties at the boundary all survive. */
    private void applyTopK() {
        int k = Math.min(config.topK(), vocab);
        float kth = scores[order[vocab - k]];
        for (int i = 0; i < vocab; i++) {
            if (scores[i] < kth) {
                scores[i] = Float.NEGATIVE_INFINITY;
            }
        }
    }

    /**
     * Walks the ascending order, removing tokens while the cumulative probability is {@code <= (float) (1 - p)};
     * the largest always survives. As PyTorch's CPU {@code cumsum} of a float32 tensor, the running sum of the
     * float probabilities is kept in double and each partial sum is rounded to float only for the comparison:
     * rounding the accumulator itself keeps one token too many on a flat 1000-token distribution with p = 0.9.
     */
    private void applyTopP() {
        float max = scores[order[vocab - 1]];
        if (max == Float.NEGATIVE_INFINITY) {
            return;
        }
        double sum = 0.0;
        for (int j = 0; j < vocab; j++) {
            double e = StrictMath.exp(scores[order[j]] - max);
            weights[j] = e;
            sum += e;
        }
        float threshold = (float) (1.0 - config.topP());
        double cumulative = 0.0;
        for (int j = 0; j < vocab - 1; j++) {
            cumulative += (float) (weights[j] / sum);
            if ((float) cumulative > threshold) {
                break; // the cumulative sum never decreases, so every later position survives too
            }
            scores[order[j]] = Float.NEGATIVE_INFINITY;
        }
    }

    /** Drops tokens whose probability is below {@code (float) minP * maxProbability}. */
    private void applyMinP() {
        float max = maxScore();
        if (max == Float.NEGATIVE_INFINITY) {
            return;
        }
        double sum = 0.0;
        for (int i = 0; i < vocab; i++) {
            double e = scores[i] > Float.NEGATIVE_INFINITY ? StrictMath.exp(scores[i] - max) : 0.0;
            weights[i] = e;
            sum += e;
        }
        float top = (float) (1.0 / sum);
        float threshold = (float) config.minP() * top;
        // The top token has probability top >= threshold (minP <= 1), so at least one token always survives,
        // which is transformers' min_tokens_to_keep = 1.
        for (int i = 0; i < vocab; i++) {
            if (scores[i] > Float.NEGATIVE_INFINITY && (float) (weights[i] / sum) < threshold) {
                scores[i] = Float.NEGATIVE_INFINITY;
            }
        }
    }

    private float maxScore() {
        float max = Float.NEGATIVE_INFINITY;
        for (int i = 0; i < vocab; i++) {
            if (scores[i] > max) {
                max = scores[i];
            }
        }
        return max;
    }

    /** Lowest id among the largest scores, as {@code torch.argmax}. */
    private int argmax() {
        int best = 0;
        float bestScore = scores[0];
        for (int i = 1; i < vocab; i++) {
            if (scores[i] > bestScore || (Float.isNaN(bestScore) && !Float.isNaN(scores[i]))) {
                best = i;
                bestScore = scores[i];
            }
        }
        return best;
    }

    /** Inverse-CDF draw over the survivors in id order, with weights exp(score - max) in double. */
    private int draw() {
        float max = maxScore();
        if (max == Float.NEGATIVE_INFINITY) {
            throw new IllegalStateException("every score is -inf or NaN: nothing to sample from");
        }
        double total = 0.0;
        for (int i = 0; i < vocab; i++) {
            double w = scores[i] > Float.NEGATIVE_INFINITY ? StrictMath.exp((double) scores[i] - max) : 0.0;
            weights[i] = w;
            total += w;
        }
        double target = random.nextDouble() * total;
        double cumulative = 0.0;
        int last = -1;
        for (int i = 0; i < vocab; i++) {
            double w = weights[i];
            if (w > 0.0) {
                cumulative += w;
                last = i;
                if (target < cumulative) {
                    return i;
                }
            }
        }
        return last; // target landed on the rounding slack at the very end of the cumulative sum
    }

    // ---------------------------------------------------------------- stable ascending sort of ids by score

    /** The ids of {@code values} sorted ascending, ties by id; exposed for the test against a comparison sort. */
    int[] ascendingOrder(float[] values) {
        ensureScratch(values.length);
        System.arraycopy(values, 0, scores, 0, vocab);
        sortAscending();
        return Arrays.copyOf(order, vocab);
    }

    /**
     * Fills {@link #order} with all ids sorted ascending by score, equal scores in increasing id order. An LSD radix
     * sort over the 32-bit order-preserving image of each float: four stable byte passes, linear in the vocabulary
     * (a comparison sort of 152k boxed ids per token would cost several milliseconds).
     */
    private void sortAscending() {
        for (int i = 0; i < vocab; i++) {
            keys[i] = orderedKey(scores[i]);
            order[i] = i;
        }
        int[] srcKeys = keys;
        int[] srcIds = order;
        int[] dstKeys = keysScratch;
        int[] dstIds = orderScratch;
        for (int shift = 0; shift < 32; shift += 8) {
            Arrays.fill(byteCounts, 0);
            for (int j = 0; j < vocab; j++) {
                byteCounts[(srcKeys[j] >>> shift) & 0xFF]++;
            }
            if (byteCounts[(srcKeys[0] >>> shift) & 0xFF] == vocab) {
                continue; // every key has the same byte here: the pass would be the identity
            }
            int start = 0;
            for (int b = 0; b < 256; b++) {
                int count = byteCounts[b];
                byteCounts[b] = start;
                start += count;
            }
            for (int j = 0; j < vocab; j++) {
                int key = srcKeys[j];
                int position = byteCounts[(key >>> shift) & 0xFF]++;
                dstKeys[position] = key;
                dstIds[position] = srcIds[j];
            }
            int[] swapKeys = srcKeys;
            srcKeys = dstKeys;
            dstKeys = swapKeys;
            int[] swapIds = srcIds;
            srcIds = dstIds;
            dstIds = swapIds;
        }
        if (srcIds != order) {
            System.arraycopy(srcIds, 0, order, 0, vocab);
            System.arraycopy(srcKeys, 0, keys, 0, vocab);
        }
    }

    /**
     * Maps a float to an int whose unsigned order is the float order: flip the sign bit of positives, all bits of
     * negatives. Adding +0f first turns -0 into +0 so the two zeros tie, as they compare equal.
     */
    static int orderedKey(float value) {
        int bits = Float.floatToRawIntBits(value + 0.0f);
        return bits < 0 ? ~bits : bits ^ 0x80000000;
    }
}
