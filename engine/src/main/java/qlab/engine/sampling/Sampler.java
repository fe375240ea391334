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
 * xoshiro256** and {@link NonPositiveExp} (plain double arithmetic, no platform math library), so a seed, the
 * same logits and the same context give the same tokens on every JVM and platform.
 *
 * <p>Cost per token: top-k and top-p avoid sorting the whole vocabulary. A histogram over the scores' high bits
 * finds the bucket holding the k-th value, and for top-p the buckets whose whole mass lies below the cut;
 * only the remaining candidates are sorted. The worst case (a flat distribution) sorts everything.
 *
 * <p>Not thread-safe: one sampler per generated sequence. Its scratch buffers are sized to the vocabulary on first
 * use, so a step allocates nothing.
 */
public final class Sampler {
    private final SamplingConfig config;
    private final Xoshiro256StarStar random;

    private static final int BUCKETS = 1 << 16;  // score histogram over the top 16 bits of orderedKey

    private int vocab = -1;
    private float[] scores;         // [vocab] processed scores; -inf = filtered out
    private double[] weights;       // [vocab] exp(score - max) by id, valid while weightsValid
    private boolean weightsValid;
    private int[] order;            // [vocab] a subset of ids, sorted ascending by score, ties by id
    private int[] orderScratch;     // [vocab]
    private int[] keys;             // [vocab] orderedKey of the ids in order
    private int[] keysScratch;      // [vocab]
    private float[] bucketValues;   // [vocab] scores of one histogram bucket
    private long[] seen;            // [ceil(vocab / 64)] bitset of context ids, all clear between calls
    private final int[] bucketCounts = new int[BUCKETS];
    private final double[] bucketMass = new double[BUCKETS];
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
        weightsValid = false;
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
        if (config.topK() != 0) {
            applyTopK();
        }
        if (config.topP() < 1.0) {
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
        weights = new double[size];
        order = new int[size];
        orderScratch = new int[size];
        keys = new int[size];
        keysScratch = new int[size];
        bucketValues = new float[size];
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
        float kth = kthLargest(k);
        for (int i = 0; i < vocab; i++) {
            if (scores[i] < kth) {
                scores[i] = Float.NEGATIVE_INFINITY;
            }
        }
    }

    /** The k-th largest score (1-based), counting equal values separately, as {@code torch.topk(...)[0][-1]}. */
    private float kthLargest(int k) {
        Arrays.fill(bucketCounts, 0);
        for (int i = 0; i < vocab; i++) {
            bucketCounts[orderedKey(scores[i]) >>> 16]++;
        }
        int above = 0;
        int bucket = BUCKETS - 1;
        while (above + bucketCounts[bucket] < k) {
            above += bucketCounts[bucket];
            bucket--;
        }
        int inBucket = 0;
        for (int i = 0; i < vocab; i++) {
            if (orderedKey(scores[i]) >>> 16 == bucket) {
                bucketValues[inBucket++] = scores[i];
            }
        }
        Arrays.sort(bucketValues, 0, inBucket);
        return bucketValues[inBucket - (k - above)];
    }

    /**
     * Nucleus filtering as {@code TopPLogitsWarper}: in ascending score order (ties by id), remove tokens while the
     * cumulative probability is {@code <= (float) (1 - p)}; the largest always survives. As PyTorch's CPU
     * {@code cumsum} of a float32 tensor, the running sum of the float probabilities is kept in double and each
     * partial sum is rounded to float only for the comparison (rounding the accumulator itself keeps one token
     * too many on a flat 1000-token distribution with p = 0.9).
     *
     * <p>Whole histogram buckets at the bottom whose mass stays clearly below the threshold are removed without
     * sorting; the double sum of their mass differs from the sequential one by far less than the float32
     * differences between any two softmax implementations.
     */
    private void applyTopP() {
        float max = maxScore();
        if (max == Float.NEGATIVE_INFINITY) {
            return;
        }
        double sum = fillWeights(max);
        float threshold = (float) (1.0 - config.topP());

        Arrays.fill(bucketCounts, 0);
        Arrays.fill(bucketMass, 0.0);
        int top = 0;
        for (int i = 0; i < vocab; i++) {
            if (scores[i] > Float.NEGATIVE_INFINITY) {
                int bucket = orderedKey(scores[i]) >>> 16;
                bucketCounts[bucket]++;
                bucketMass[bucket] += (float) (weights[i] / sum);
                top = Math.max(top, bucket);
            }
        }
        // Buckets entirely below the cut: their cumulative mass stays below the threshold by a margin far above
        // the summation-order error of a double sum of <= 2^18 terms (~3e-11). The top bucket is never skipped.
        double removedMass = 0.0;
        double safeLimit = threshold - 1e-9;
        int firstSorted = 0;
        while (firstSorted < top && removedMass + bucketMass[firstSorted] < safeLimit) {
            removedMass += bucketMass[firstSorted];
            firstSorted++;
        }
        int count = 0;
        for (int i = 0; i < vocab; i++) {
            if (scores[i] > Float.NEGATIVE_INFINITY) {
                if (orderedKey(scores[i]) >>> 16 >= firstSorted) {
                    order[count++] = i;
                } else {
                    scores[i] = Float.NEGATIVE_INFINITY;
                }
            }
        }
        sortAscending(count);
        double cumulative = removedMass;
        for (int j = 0; j < count - 1; j++) {
            int id = order[j];
            cumulative += (float) (weights[id] / sum);
            if ((float) cumulative > threshold) {
                break; // the cumulative sum never decreases, so every later position survives too
            }
            scores[id] = Float.NEGATIVE_INFINITY;
        }
    }

    /** Drops tokens whose probability is below {@code (float) minP * maxProbability}, as {@code MinPLogitsWarper}. */
    private void applyMinP() {
        float max = maxScore();
        if (max == Float.NEGATIVE_INFINITY) {
            return;
        }
        double sum = fillWeights(max);
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

    /**
     * Sets {@code weights[i] = exp(scores[i] - max)} for surviving ids (0 for the others) and returns their sum.
     * Filters only remove tokens and the maximum always survives, so weights computed by an earlier filter in the
     * same call stay valid for the survivors and are reused.
     */
    private double fillWeights(float max) {
        double sum = 0.0;
        for (int i = 0; i < vocab; i++) {
            double w;
            if (!(scores[i] > Float.NEGATIVE_INFINITY)) {
                w = 0.0;
            } else if (weightsValid) {
                w = weights[i];
            } else {
                w = NonPositiveExp.exp(scores[i] - max);
            }
            weights[i] = w;
            sum += w;
        }
        weightsValid = true;
        return sum;
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
        double total = fillWeights(max);
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
        for (int i = 0; i < vocab; i++) {
            order[i] = i;
        }
        sortAscending(vocab);
        return Arrays.copyOf(order, vocab);
    }

    /**
     * Sorts {@code order[0, count)}, given in increasing id order, ascending by score; equal scores keep id order.
     * An LSD radix sort over the 32-bit order-preserving image of each float: four stable byte passes, linear in
     * {@code count}.
     */
    private void sortAscending(int count) {
        for (int j = 0; j < count; j++) {
            keys[j] = orderedKey(scores[order[j]]);
        }
        int[] srcKeys = keys;
        int[] srcIds = order;
        int[] dstKeys = keysScratch;
        int[] dstIds = orderScratch;
        for (int shift = 0; shift < 32 && count > 1; shift += 8) {
            Arrays.fill(byteCounts, 0);
            for (int j = 0; j < count; j++) {
                byteCounts[(srcKeys[j] >>> shift) & 0xFF]++;
            }
            if (byteCounts[(srcKeys[0] >>> shift) & 0xFF] == count) {
                continue; // every key has the same byte here: the pass would be the identity
            }
            int start = 0;
            for (int b = 0; b < 256; b++) {
                int n = byteCounts[b];
                byteCounts[b] = start;
                start += n;
            }
            for (int j = 0; j < count; j++) {
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
            System.arraycopy(srcIds, 0, order, 0, count);
            System.arraycopy(srcKeys, 0, keys, 0, count);
        }
    }

    /**
     * Maps a float to an int whose unsigned order is the float order: flip the sign bit of positives, all bits of
     * negatives. Adding +0f first turns -0 into +0 so the two zeros tie, as they compare equal. Branch-free: with
     * a conditional, the sign mispredictions made a pass over 152k scores about ten times slower.
     */
    static int orderedKey(float value) {
        int bits = Float.floatToRawIntBits(value + 0.0f);
        return bits ^ ((bits >> 31) | 0x80000000);
    }
}
