package qlab.engine.sampling;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.Comparator;
import java.util.Random;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import qlab.engine.QlabException;

class SamplerTest {
    private static final int[] NO_CONTEXT = new int[0];

    /** Logits whose softmax is exactly the given probabilities (they sum to 1). */
    private static float[] logitsOf(double... probabilities) {
        float[] logits = new float[probabilities.length];
        for (int i = 0; i < logits.length; i++) {
            logits[i] = (float) Math.log(probabilities[i]);
        }
        return logits;
    }

    @Test
    void repetitionPenaltyMatchesHandComputation() {
        float[] logits = {2.0f, -1.0f, 0.5f, 3.0f, -0.25f, 0.0f};
        int[] context = {0, 1, 1, 4, 5, 1};
        // id 0: 2 / 1.5; id 1 (three times, penalised once): -1 * 1.5; id 4: -0.25 * 1.5; id 5: 0 / 1.5 = 0.
        float[] expected = {1.3333334f, -1.5f, 0.5f, 3.0f, -0.375f, 0.0f};
        SamplingConfig penalised = SamplingConfig.greedy().withRepetitionPenalty(1.5);
        assertArrayEquals(expected, new Sampler(penalised).processedScores(logits, context, context.length));
        // Same numbers when sampling at T = 1 with no filters: the penalty is a processor, not a warper.
        assertArrayEquals(expected, new Sampler(SamplingConfig.unfiltered(1).withRepetitionPenalty(1.5))
                .processedScores(logits, context, context.length));
        // Only the first contextLength entries count.
        float[] firstTwo = {1.3333334f, -1.5f, 0.5f, 3.0f, -0.25f, 0.0f};
        assertArrayEquals(firstTwo, new Sampler(penalised).processedScores(logits, context, 2));
        assertArrayEquals(logits, new Sampler(penalised).processedScores(logits, context, 0));
    }

    @Test
    void repetitionPenaltyAppliesToGreedyDecoding() {
        float[] logits = {3.0f, 2.9f, -5.0f};
        assertEquals(0, new Sampler(SamplingConfig.greedy()).sample(logits, new int[] {0}));
        // 3.0 / 1.2 = 2.5 < 2.9: the repeated token loses its lead.
        assertEquals(1, new Sampler(SamplingConfig.greedy().withRepetitionPenalty(1.2)).sample(logits, new int[] {0}));
    }

    @Test
    void contextIdOutsideTheVocabularyIsRejected() {
        Sampler sampler = new Sampler(SamplingConfig.greedy().withRepetitionPenalty(1.1));
        IllegalArgumentException error = assertThrows(IllegalArgumentException.class,
                () -> sampler.sample(new float[] {1f, 2f}, new int[] {0, 7}));
        assertTrue(error.getMessage().contains("context id 7"), error.getMessage());
        // The failed call must not leave stale "seen" marks behind: id 0 is penalised exactly once next time.
        assertArrayEquals(new float[] {1f / 1.1f, 2f},
                sampler.processedScores(new float[] {1f, 2f}, new int[] {0}, 1));
    }

    @Test
    void minPMatchesHandComputation() {
        float[] logits = logitsOf(0.5, 0.25, 0.15, 0.06, 0.04);
        // threshold 0.4 * 0.5 = 0.2: only 0.5 and 0.25 stay.
        assertArrayEquals(new int[] {0, 1}, survivors(SamplingConfig.unfiltered(0).withMinP(0.4), logits));
        // threshold 0.1 * 0.5 = 0.05: 0.06 stays, 0.04 goes.
        assertArrayEquals(new int[] {0, 1, 2, 3}, survivors(SamplingConfig.unfiltered(0).withMinP(0.1), logits));
        // min_p = 1 keeps the top token only; min_p = 0 is off.
        assertArrayEquals(new int[] {0}, survivors(SamplingConfig.unfiltered(0).withMinP(1.0), logits));
        assertArrayEquals(new int[] {0, 1, 2, 3, 4}, survivors(SamplingConfig.unfiltered(0), logits));
        // After temperature 2 the probabilities are proportional to sqrt(p): sqrt(0.06 / 0.5) = 0.346 >= 0.3 stays,
        // sqrt(0.04 / 0.5) = 0.283 < 0.3 goes.
        assertArrayEquals(new int[] {0, 1, 2, 3},
                survivors(SamplingConfig.unfiltered(0).withTemperature(2.0).withMinP(0.3), logits));
    }

    @Test
    void minPRunsAfterTopPAsInTransformers() {
        float[] logits = logitsOf(0.5, 0.25, 0.15, 0.06, 0.04);
        // top_p = 0.92 on the full distribution: ascending cumulative sums 0.04, 0.10, 0.25, ... against
        // 1 - 0.92 = 0.08 remove only the 0.04 token; min_p = 0.1 then removes nothing (0.06 / 0.5 = 0.12).
        // Min-p first would drop 0.04, renormalise, and top-p would then drop 0.06 / 0.96 = 0.0625 <= 0.08 too.
        SamplingConfig config = SamplingConfig.unfiltered(0).withTopP(0.92).withMinP(0.1);
        assertArrayEquals(new int[] {0, 1, 2, 3}, survivors(config, logits));
    }

    @Test
    void topKKeepsEveryTieAtTheBoundary() {
        float[] logits = {1f, 3f, 3f, 2f, 0f};
        assertArrayEquals(new int[] {1, 2}, survivors(SamplingConfig.unfiltered(0).withTopK(1), logits));
        assertArrayEquals(new int[] {1, 2}, survivors(SamplingConfig.unfiltered(0).withTopK(2), logits));
        assertArrayEquals(new int[] {1, 2, 3}, survivors(SamplingConfig.unfiltered(0).withTopK(3), logits));
        // k larger than the vocabulary keeps everything.
        assertArrayEquals(new int[] {0, 1, 2, 3, 4}, survivors(SamplingConfig.unfiltered(0).withTopK(50), logits));
    }

    @Test
    void topPMatchesHandComputation() {
        float[] logits = logitsOf(0.5, 0.25, 0.15, 0.06, 0.04);
        // 1 - 0.7 = 0.3: cumulative 0.04, 0.10, 0.25 <= 0.3 removed, 0.50 > 0.3 kept.
        assertArrayEquals(new int[] {0, 1}, survivors(SamplingConfig.unfiltered(0).withTopP(0.7), logits));
        // top_p = 0 removes all but the largest.
        assertArrayEquals(new int[] {0}, survivors(SamplingConfig.unfiltered(0).withTopP(0.0), logits));
    }

    @Test
    void temperatureZeroIsArgmaxWithLowestIdOnTies() {
        float[] logits = {0.5f, 2.0f, -1.0f, 2.0f, 1.9f};
        SamplingConfig greedy = SamplingConfig.greedy().withTopK(1).withTopP(0.1).withSeed(99);
        Sampler sampler = new Sampler(greedy);
        for (int i = 0; i < 10; i++) {
            assertEquals(1, sampler.sample(logits, NO_CONTEXT));
        }
        assertArrayEquals(new int[] {1}, sampler.survivors(logits, NO_CONTEXT, 0));
        Random random = new Random(5);
        for (int trial = 0; trial < 100; trial++) {
            float[] row = new float[1 + random.nextInt(3000)];
            for (int i = 0; i < row.length; i++) {
                row[i] = (float) random.nextGaussian();
            }
            int expected = 0;
            for (int i = 1; i < row.length; i++) {
                if (row[i] > row[expected]) {
                    expected = i;
                }
            }
            assertEquals(expected, new Sampler(SamplingConfig.greedy()).sample(row, NO_CONTEXT));
        }
    }

    @Test
    void aSeedReproducesTheSameDraws() {
        float[] logits = new float[500];
        Random random = new Random(11);
        for (int i = 0; i < logits.length; i++) {
            logits[i] = (float) (2 * random.nextGaussian());
        }
        SamplingConfig config = new SamplingConfig(0.8, 40, 0.95, 0.02, 1.1, 1234L);
        int[] first = drawSequence(config, logits, 300);
        assertArrayEquals(first, drawSequence(config, logits, 300));
        assertNotEquals(Arrays.toString(first), Arrays.toString(drawSequence(config.withSeed(1235L), logits, 300)));
        // Pinned stream: the first draws of xoshiro256** seeded via SplitMix64 from 1234 must never change.
        assertArrayEquals(PINNED_FIRST_DRAWS, Arrays.copyOf(first, PINNED_FIRST_DRAWS.length));
    }

    /** Recorded from this implementation once; guards the determinism promise across JDKs and refactorings. */
    private static final int[] PINNED_FIRST_DRAWS = {13, 402, 366, 445, 84, 473, 253, 129, 321, 366, 320, 129, 84, 366, 197, 445};

    /** Feeds each drawn token back as context, as a decode loop would, so the penalty changes every step. */
    private static int[] drawSequence(SamplingConfig config, float[] logits, int steps) {
        Sampler sampler = new Sampler(config);
        int[] tokens = new int[steps];
        for (int i = 0; i < steps; i++) {
            tokens[i] = sampler.sample(logits, tokens, i);
        }
        return tokens;
    }

    @Test
    void drawFrequenciesFollowTheSoftmax() {
        float[] logits = {1.0f, 0.5f, 0.0f, -0.5f, 2.0f, -1.0f};
        assertChiSquare(SamplingConfig.unfiltered(7), logits, new double[] {1.0, 0.5, 0.0, -0.5, 2.0, -1.0});
        // Temperature 0.5 doubles the logits; top-k 3 leaves ids 0, 1, 4.
        assertChiSquare(SamplingConfig.unfiltered(8).withTemperature(0.5).withTopK(3), logits,
                new double[] {2.0, 1.0, Double.NEGATIVE_INFINITY, Double.NEGATIVE_INFINITY, 4.0,
                        Double.NEGATIVE_INFINITY});
    }

    private static void assertChiSquare(SamplingConfig config, float[] logits, double[] expectedLogits) {
        int draws = 200_000;
        double max = Arrays.stream(expectedLogits).max().orElseThrow();
        double[] probability = Arrays.stream(expectedLogits).map(x -> Math.exp(x - max)).toArray();
        double total = Arrays.stream(probability).sum();
        long[] counts = new long[logits.length];
        Sampler sampler = new Sampler(config);
        for (int i = 0; i < draws; i++) {
            counts[sampler.sample(logits, NO_CONTEXT)]++;
        }
        double chiSquare = 0;
        int categories = 0;
        for (int i = 0; i < logits.length; i++) {
            double expected = draws * probability[i] / total;
            if (expected == 0) {
                assertEquals(0, counts[i], "filtered token " + i + " was drawn");
                continue;
            }
            categories++;
            chiSquare += (counts[i] - expected) * (counts[i] - expected) / expected;
        }
        // 99.9% quantiles of chi-square: 5 degrees of freedom 20.52, 2 degrees 13.82.
        double critical = categories == 6 ? 20.52 : categories == 3 ? 13.82 : Double.NaN;
        System.out.printf("draw frequencies (%s): chi-square %.2f over %d categories, 99.9%% bound %.2f%n",
                config.describe(), chiSquare, categories, critical);
        assertTrue(chiSquare < critical, "chi-square " + chiSquare + " >= " + critical + " " + Arrays.toString(counts));
    }

    @Test
    void radixOrderEqualsAStableComparisonSort() {
        Random random = new Random(3);
        for (int trial = 0; trial < 20; trial++) {
            int n = 1 + random.nextInt(5000);
            float[] values = new float[n];
            for (int i = 0; i < n; i++) {
                values[i] = switch (random.nextInt(6)) {
                    case 0 -> Float.NEGATIVE_INFINITY;
                    case 1 -> random.nextBoolean() ? 0.0f : -0.0f;
                    case 2 -> random.nextInt(7) * 0.5f - 1.5f; // many exact ties
                    case 3 -> (float) (random.nextGaussian() * 1e-30);
                    default -> (float) (random.nextGaussian() * 10);
                };
            }
            // Equal values (including -0 and +0) keep id order.
            Integer[] expected = IntStream.range(0, n).boxed().toArray(Integer[]::new);
            Arrays.sort(expected, Comparator.comparingDouble((Integer i) -> values[i] + 0.0f));
            int[] actual = new Sampler(SamplingConfig.unfiltered(0)).ascendingOrder(values);
            assertArrayEquals(Arrays.stream(expected).mapToInt(Integer::intValue).toArray(), actual, "trial " + trial);
        }
    }

    @Test
    void invalidSettingsNameTheField() {
        assertTrue(assertThrows(QlabException.class, () -> SamplingConfig.greedy().withTemperature(-0.5))
                .getMessage().contains("\"temperature\""));
        assertTrue(assertThrows(QlabException.class, () -> SamplingConfig.greedy().withTemperature(1e-60))
                .getMessage().contains("\"temperature\""));
        assertTrue(assertThrows(QlabException.class, () -> SamplingConfig.greedy().withTopK(-1))
                .getMessage().contains("\"top_k\""));
        assertTrue(assertThrows(QlabException.class, () -> SamplingConfig.greedy().withTopP(1.5))
                .getMessage().contains("\"top_p\""));
        assertTrue(assertThrows(QlabException.class, () -> SamplingConfig.greedy().withMinP(Double.NaN))
                .getMessage().contains("\"min_p\""));
        assertTrue(assertThrows(QlabException.class, () -> SamplingConfig.greedy().withRepetitionPenalty(0))
                .getMessage().contains("\"repetition_penalty\""));
    }

    @Test
    void describeIsOneReadableLine() {
        assertEquals("greedy", SamplingConfig.greedy().describe());
        assertEquals("sampling temperature=0.7 top_k=20 top_p=0.8 repetition_penalty=1.05 seed=42",
                new SamplingConfig(0.7, 20, 0.8, 0.0, 1.05, 42).describe());
    }

    private static int[] survivors(SamplingConfig config, float[] logits) {
        return new Sampler(config).survivors(logits, NO_CONTEXT, 0);
    }
}
