package qlab.engine.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import qlab.engine.synthetic.SyntheticPreset;
import qlab.engine.testing.TestModels;
import qlab.engine.util.WorkerPool;

/**
 * The fast forward pass against the float64 reference on shapes the fixtures do not cover
 * (untied head, GQA group 3, one KV head, no grouping, head dims that are not a multiple of the
 * vector width or differ from hidden / heads, other RoPE bases, llama3 and linear RoPE scaling,
 * Llama attention and MLP biases, Qwen3 q/k norms with and without biases), and the KV cache
 * under five chunkings of the same ids.
 */
class FastVsReferenceTest {

    private static WorkerPool pool;
    /** The final norm's multiplier in {@link #fastMatchesReference}. */
    private static final double LOGIT_SCALE = 14;

    @TempDir
    static Path tmp;

    @BeforeAll
    static void start() {
        pool = new WorkerPool(2);
    }

    @AfterAll
    static void stop() {
        pool.close();
    }

    static Stream<Arguments> shapes() {
        return Stream.of(
                Arguments.of("untied-group3", TestModels.untiedGroup3()),
                Arguments.of("no-grouping", TestModels.noGrouping()),
                Arguments.of("one-kv-head", TestModels.oneKvHead()),
                Arguments.of("tiny-preset", SyntheticPreset.TINY.config()),
                Arguments.of("llama3-rope-scaling", TestModels.llama3Scaled()),
                Arguments.of("llama-biases-linear-rope", TestModels.llamaBiases()),
                Arguments.of("qwen3-norms", TestModels.qwen3Norms()),
                Arguments.of("qwen3-biases", TestModels.qwen3Biases()));
    }

    private static int[] ids(int n, int vocab, long seed) {
        return new SplittableRandom(seed).ints(n, 0, vocab).toArray();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("shapes")
    void fastMatchesReference(String name, ModelConfig config) {
        // The synthetic final norm (2.5) gives logits of a few units; a trained model's reach tens,
        // where float32 rounding in the head is larger in absolute terms: test there.
        Model model = TestModels.writeWithLogitScale(config, 7, LOGIT_SCALE, tmp.resolve(name));
        Transformer fast = new Transformer(model, pool);
        ReferenceModel ref = new ReferenceModel(model);
        int vocab = config.vocabSize();
        int[] ids = ids(37, vocab, 3);
        float[] got = fast.forward(ids, fast.newCache(64), true);
        double[][] want = ref.logits(ids);
        double worst = 0;
        double scale = 0;
        for (int t = 0; t < ids.length; t++) {
            for (int j = 0; j < vocab; j++) {
                worst = Math.max(worst, Math.abs(got[t * vocab + j] - want[t][j]));
                scale = Math.max(scale, Math.abs(want[t][j]));
            }
        }
        System.out.printf("%s: max |fast - reference| = %.3g (logits up to %.2f)%n", name, worst, scale);
        assertTrue(scale >= 20, name + ": logits only up to " + scale + ", not the size of a trained model's");
        // float32 carries ~7 digits; through the layers and the head, 1e-5 of the largest logit is the bound.
        assertTrue(worst <= 1e-5 * scale, name + ": max |fast - reference| = " + worst + " with logits up to " + scale);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("shapes")
    void fiveChunkingsAgree(String name, ModelConfig config) {
        Model model = TestModels.write(config, 11, tmp.resolve("chunk-" + name));
        Transformer fast = new Transformer(model, pool);
        int vocab = config.vocabSize();
        int[] ids = ids(23, vocab, 5);
        int[][] chunkings = {
            {23},                       // one shot
            ones(23),                   // one token at a time
            {22, 1},                    // prompt, then a decode step
            {12, 11},                   // halves
            {5, 1, 9, 2, 3, 1, 2},      // ragged
        };
        float[] baseline = null;
        int[] baseGreedy = null;
        for (int[] chunks : chunkings) {
            KvCache cache = fast.newCache(64);
            float[] all = new float[ids.length * vocab];
            int at = 0;
            for (int len : chunks) {
                float[] l = fast.forward(java.util.Arrays.copyOfRange(ids, at, at + len), cache, true);
                System.arraycopy(l, 0, all, at * vocab, l.length);
                at += len;
            }
            assertEquals(ids.length, cache.length());
            int[] greedy = Greedy.continueGreedy(fast, cache, all, vocab, 8);
            if (baseline == null) {
                baseline = all;
                baseGreedy = greedy;
                continue;
            }
            double worst = 0;
            for (int i = 0; i < all.length; i++) {
                worst = Math.max(worst, Math.abs(all[i] - baseline[i]));
            }
            assertTrue(worst <= 1e-5, name + " chunks " + java.util.Arrays.toString(chunks) + ": " + worst);
            assertArrayEquals(baseGreedy, greedy, name + " chunks " + java.util.Arrays.toString(chunks));
        }
    }

    private static int[] ones(int n) {
        int[] a = new int[n];
        java.util.Arrays.fill(a, 1);
        return a;
    }

    @Test
    void oneAndTwoThreadsGiveTheSameBits() {
        Model model = TestModels.write(TestModels.untiedGroup3(), 13, tmp.resolve("threads"));
        int[] ids = ids(19, model.config().vocabSize(), 9);
        float[] two = new Transformer(model, pool).forward(ids, new KvCache(model.config(), 32), true);
        try (WorkerPool one = new WorkerPool(1)) {
            float[] single = new Transformer(model, one).forward(ids, new KvCache(model.config(), 32), true);
            assertArrayEquals(single, two);
        }
    }

    @Test
    void batchedDecodeEqualsSingleStreamBitwise() {
        Model model = TestModels.write(TestModels.untiedGroup3(), 17, tmp.resolve("batch"));
        Transformer fast = new Transformer(model, pool);
        int vocab = model.config().vocabSize();
        int[][] prompts = {ids(3, vocab, 1), ids(9, vocab, 2), ids(1, vocab, 3), ids(14, vocab, 4), ids(6, vocab, 5)};
        int steps = 6;
        // single stream
        int[][] single = new int[prompts.length][];
        for (int b = 0; b < prompts.length; b++) {
            KvCache c = fast.newCache(32);
            single[b] = Greedy.continueGreedy(fast, c, fast.forward(prompts[b], c, false), vocab, steps);
        }
        // lock-step batch
        KvCache[] caches = new KvCache[prompts.length];
        int[] next = new int[prompts.length];
        int[][] batched = new int[prompts.length][steps];
        for (int b = 0; b < prompts.length; b++) {
            caches[b] = fast.newCache(32);
            next[b] = Greedy.argmax(fast.forward(prompts[b], caches[b], false), 0, vocab);
            batched[b][0] = next[b];
        }
        for (int s = 1; s < steps; s++) {
            float[] logits = fast.decodeBatch(next, caches);
            for (int b = 0; b < prompts.length; b++) {
                next[b] = Greedy.argmax(logits, b * vocab, vocab);
                batched[b][s] = next[b];
            }
        }
        for (int b = 0; b < prompts.length; b++) {
            assertArrayEquals(single[b], batched[b], "sequence " + b);
        }
        // and the logits themselves: one batched step vs each row alone, bit for bit
        KvCache[] a = new KvCache[prompts.length];
        KvCache[] s1 = new KvCache[prompts.length];
        for (int b = 0; b < prompts.length; b++) {
            a[b] = fast.newCache(32);
            s1[b] = fast.newCache(32);
            fast.forward(prompts[b], a[b], false);
            fast.forward(prompts[b], s1[b], false);
        }
        int[] tok = {1, 2, 3, 4, 5};
        float[] batch = fast.decodeBatch(tok, a);
        for (int b = 0; b < prompts.length; b++) {
            float[] alone = fast.forward(new int[] {tok[b]}, s1[b], false);
            assertArrayEquals(alone, java.util.Arrays.copyOfRange(batch, b * vocab, (b + 1) * vocab), "row " + b);
        }
    }
}
