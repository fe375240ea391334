package qlab.engine.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import qlab.engine.testing.Fixtures;
import qlab.engine.util.WorkerPool;

/**
 * The engine against golden logits and greedy continuations produced by Hugging Face
 * transformers' Qwen2, Llama (llama3 RoPE scaling, untied head) and Qwen3 (q/k norms, head dim
 * independent of the hidden size) arithmetic (see the fixture README): fast path within 1e-4 of
 * both the float32 and the float64 goldens, the float64 reference within 1e-9 of the float64
 * golden, greedy tokens identical.
 */
class OracleForwardTest {

    private static WorkerPool pool;

    @BeforeAll
    static void start() {
        pool = new WorkerPool(2);
    }

    @AfterAll
    static void stop() {
        pool.close();
    }

    static Stream<String> models() {
        return Stream.of("tiny-qwen2/bf16", "tiny-qwen2/f16", "tiny-qwen2/f32",
                "tiny-llama/bf16", "tiny-llama/f16", "tiny-llama/f32");
    }

    @ParameterizedTest
    @MethodSource("models")
    void tinyModelMatchesGoldens(String name) {
        Path dir = Fixtures.oracle().resolve(name);
        Model model = Model.load(dir);
        Transformer fast = new Transformer(model, pool);
        ReferenceModel ref = new ReferenceModel(model);
        JsonNode manifest = Fixtures.json(dir.resolve("golden/manifest.json"));
        int vocab = model.config().vocabSize();
        double worstFast = 0;
        double worstRef = 0;
        for (JsonNode seq : manifest.get("sequences")) {
            int[] ids = Fixtures.ints(seq.get("input_ids"));
            double[] g64 = Fixtures.f64(dir.resolve(seq.get("logits_f64").get("file").textValue()));
            float[] g32 = Fixtures.f32(dir.resolve(seq.get("logits_f32").get("file").textValue()));

            KvCache cache = fast.newCache(ids.length + 32);
            float[] logits = fast.forward(ids, cache, true);
            assertEquals(ids.length * vocab, logits.length);
            double d64 = 0;
            double d32 = 0;
            for (int i = 0; i < logits.length; i++) {
                d64 = Math.max(d64, Math.abs(logits[i] - g64[i]));
                d32 = Math.max(d32, Math.abs(logits[i] - g32[i]));
            }
            assertTrue(d64 <= 1e-4, seq.get("name") + ": max |fast - f64 golden| = " + d64);
            assertTrue(d32 <= 1e-4, seq.get("name") + ": max |fast - f32 golden| = " + d32);
            worstFast = Math.max(worstFast, Math.max(d64, d32));

            double[][] rl = ref.logits(ids);
            double dr = 0;
            for (int t = 0; t < ids.length; t++) {
                for (int j = 0; j < vocab; j++) {
                    dr = Math.max(dr, Math.abs(rl[t][j] - g64[t * vocab + j]));
                }
            }
            assertTrue(dr <= 1e-9, seq.get("name") + ": max |reference - f64 golden| = " + dr);
            worstRef = Math.max(worstRef, dr);

            int[] expected = Fixtures.ints(seq.get("greedy_continuation"));
            assertArrayEquals(expected, Greedy.continueGreedy(fast, cache, logits, vocab, expected.length),
                    seq.get("name") + ": greedy continuation (KV cache)");
            assertArrayEquals(expected, ref.greedy(ids, expected.length), seq.get("name") + ": greedy (reference)");
        }
        System.out.printf("%s: max |fast - golden| = %.3g, max |reference(f64) - f64 golden| = %.3g%n",
                name, worstFast, worstRef);
    }

    static Stream<String> realVocabularyModels() {
        return Stream.of("tiny-qwen2-realvocab", "tiny-llama3-realvocab", "tiny-qwen3-realvocab");
    }

    @ParameterizedTest
    @MethodSource("realVocabularyModels")
    void realVocabularyModelMatchesGoldens(String name) {
        Path dir = Fixtures.oracle().resolve(name);
        Model model = Model.load(dir);
        Transformer fast = new Transformer(model, pool);
        ReferenceModel ref = new ReferenceModel(model);
        JsonNode manifest = Fixtures.json(dir.resolve("golden/manifest.json"));
        int vocab = model.config().vocabSize();
        double worst = 0;
        for (JsonNode p : manifest.get("prompts")) {
            int[] ids = Fixtures.ints(p.get("input_ids"));
            double[] g64 = Fixtures.f64(dir.resolve(p.get("last_position_logits_f64").get("file").textValue()));
            float[] g32 = Fixtures.f32(dir.resolve(p.get("last_position_logits_f32").get("file").textValue()));
            KvCache cache = fast.newCache(ids.length + 32);
            float[] all = fast.forward(ids, cache, true);
            int lastOff = (ids.length - 1) * vocab;
            for (int j = 0; j < vocab; j++) {
                worst = Math.max(worst, Math.abs(all[lastOff + j] - g64[j]));
                worst = Math.max(worst, Math.abs(all[lastOff + j] - g32[j]));
            }
            if (p.has("all_positions_logits_f32")) {
                float[] every = Fixtures.f32(dir.resolve(p.get("all_positions_logits_f32").get("file").textValue()));
                assertEquals(all.length, every.length);
                for (int i = 0; i < every.length; i++) {
                    worst = Math.max(worst, Math.abs(all[i] - every[i]));
                }
            }
            // every position: top-20 ids' logits and the log-sum-exp
            JsonNode top = p.get("per_position_top20_f64");
            JsonNode lse = p.get("per_position_logsumexp_f64");
            for (int t = 0; t < ids.length; t++) {
                JsonNode tt = top.get(t);
                for (int r = 0; r < tt.get("ids").size(); r++) {
                    double d = Math.abs(all[t * vocab + tt.get("ids").get(r).intValue()] - tt.get("logits_f64").get(r).doubleValue());
                    worst = Math.max(worst, d);
                }
                double max = Double.NEGATIVE_INFINITY;
                for (int j = 0; j < vocab; j++) {
                    max = Math.max(max, all[t * vocab + j]);
                }
                double s = 0;
                for (int j = 0; j < vocab; j++) {
                    s += Math.exp(all[t * vocab + j] - max);
                }
                worst = Math.max(worst, Math.abs(max + Math.log(s) - lse.get(t).doubleValue()));
            }
            double[][] rl = ref.logits(ids);
            double dr = 0;
            for (int j = 0; j < vocab; j++) {
                dr = Math.max(dr, Math.abs(rl[ids.length - 1][j] - g64[j]));
            }
            assertTrue(dr <= 1e-9, p.get("name") + ": reference vs f64 golden " + dr);
            float[] last = java.util.Arrays.copyOfRange(all, lastOff, lastOff + vocab);
            int[] expected = Fixtures.ints(p.get("greedy_continuation"));
            assertArrayEquals(expected, Greedy.continueGreedy(fast, cache, last, vocab, expected.length), p.get("name").textValue());
        }
        assertTrue(worst <= 1e-4, name + ": max |fast - golden| = " + worst);
        System.out.printf("%s: max |fast - golden| = %.3g%n", name, worst);
    }
}
