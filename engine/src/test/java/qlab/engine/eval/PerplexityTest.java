package qlab.engine.eval;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import qlab.engine.QlabException;
import qlab.engine.model.Model;
import qlab.engine.model.Transformer;
import qlab.engine.testing.Fixtures;
import qlab.engine.util.WorkerPool;

class PerplexityTest {

    private static int[] tokens(int n, int vocab) {
        return new SplittableRandom(1).ints(n, 0, vocab).toArray();
    }

    @Test
    void aUniformModelScoresTheVocabularySize() {
        int vocab = 1000;
        ScriptedModel uniform = new ScriptedModel(vocab, (w, p, out) -> java.util.Arrays.fill(out, 0.25f));
        for (ScoringMode mode : ScoringMode.values()) {
            Perplexity.Result r = Perplexity.run(uniform, tokens(700, vocab), 128, mode);
            assertEquals(vocab, r.ppl(), 1e-9 * vocab, mode.id());
            assertEquals(0, r.pplSe(), 1e-9);
        }
        // scored counts: second-half scores 63 of each full 128-window (5 full windows); all scores 127 per window + 59 of the last 60
        assertEquals(5 * 63, Perplexity.run(uniform, tokens(700, vocab), 128, ScoringMode.SECOND_HALF).tokensScored());
        assertEquals(5 * 127 + 59, Perplexity.run(uniform, tokens(700, vocab), 128, ScoringMode.ALL).tokensScored());
    }

    @Test
    void aCertainModelScoresOne() {
        int vocab = 500;
        ScriptedModel certain = new ScriptedModel(vocab, (w, p, out) -> {
            java.util.Arrays.fill(out, -100f);
            if (p + 1 < w.length) {
                out[w[p + 1]] = 0f;
            }
        });
        for (ScoringMode mode : ScoringMode.values()) {
            assertEquals(1.0, Perplexity.run(certain, tokens(300, vocab), 64, mode).ppl(), 1e-12, mode.id());
        }
    }

    @Test
    void matchesTheReferencePerplexityGolden() {
        Path oracle = Fixtures.oracle();
        JsonNode g = Fixtures.json(oracle.resolve("perplexity/perplexity.json"));
        Model model = Model.load(oracle.resolve("tiny-qwen2/bf16"));
        double[] tokenNll = Fixtures.f64(oracle.resolve("perplexity/token_nll.f64.bin"));
        try (WorkerPool pool = new WorkerPool(2)) {
            Perplexity.Result r = Perplexity.run(new Transformer(model, pool), Fixtures.ints(g.get("input_ids")),
                    g.get("chunk_size").intValue(), ScoringMode.ALL);
            JsonNode want = g.get("result_f64");
            assertEquals(want.get("scored_tokens").intValue(), r.tokensScored());
            double meanErr = Math.abs(r.meanNll() - want.get("mean_nll").doubleValue());
            double tokErr = 0;
            for (int i = 0; i < tokenNll.length; i++) {
                tokErr = Math.max(tokErr, Math.abs(r.nll()[i] - tokenNll[i]));
            }
            System.out.printf("perplexity golden: mean NLL error %.3g, max per-token error %.3g, ppl %.6f vs %.6f%n",
                    meanErr, tokErr, r.ppl(), want.get("perplexity").doubleValue());
            assertTrue(meanErr <= 1e-5, "mean NLL error " + meanErr);
            assertTrue(tokErr <= 1e-4, "per-token NLL error " + tokErr);
            assertEquals(want.get("perplexity").doubleValue(), r.ppl(), 1e-5 * r.ppl());
        }
    }

    @Test
    void oneAndTwoThreadsGiveTheSamePerplexity() {
        Model model = Model.load(Fixtures.oracle().resolve("tiny-qwen2/f16"));
        int[] ids = tokens(400, model.config().vocabSize());
        double one;
        double two;
        try (WorkerPool p1 = new WorkerPool(1); WorkerPool p2 = new WorkerPool(2)) {
            one = Perplexity.run(new Transformer(model, p1), ids, 100, ScoringMode.SECOND_HALF).ppl();
            two = Perplexity.run(new Transformer(model, p2), ids, 100, ScoringMode.SECOND_HALF).ppl();
        }
        assertEquals(one, two, 0.0);
    }

    @Test
    void textsTooShortAreClearErrors() {
        ScriptedModel m = new ScriptedModel(10, (w, p, out) -> { });
        assertTrue(assertThrows(QlabException.class, () -> Perplexity.run(m, new int[0], 64, ScoringMode.ALL))
                .getMessage().contains("0 tokens"));
        assertTrue(assertThrows(QlabException.class, () -> Perplexity.run(m, new int[50], 64, ScoringMode.SECOND_HALF))
                .getMessage().contains("too short for one window"));
    }
}
