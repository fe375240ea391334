package qlab.engine.eval;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import qlab.engine.model.KvCache;
import qlab.engine.model.LanguageModel;
import qlab.engine.model.ModelConfig;

/**
 * A window scored in passes of a few rows visits the same predictions, with the same logits, as
 * the window in one pass: long contexts are scored in bounded memory without changing a figure.
 */
class WindowChunkingTest {

    /** Logits a function of the token at the row and its absolute position in the cache. */
    private static final class PositionalModel implements LanguageModel {
        private final ModelConfig config = new ModelConfig(8, 8, 1, 2, 1, 4, 11, 1e-6, 10000, true, 4096, "float32");

        @Override
        public ModelConfig config() {
            return config;
        }

        @Override
        public KvCache newCache(int capacity) {
            return new KvCache(config, capacity);
        }

        @Override
        public float[] forward(int[] tokens, KvCache cache, int firstLogitRow) {
            int v = config.vocabSize();
            float[] out = new float[(tokens.length - firstLogitRow) * v];
            for (int r = firstLogitRow; r < tokens.length; r++) {
                int pos = cache.length() + r;
                for (int j = 0; j < v; j++) {
                    out[(r - firstLogitRow) * v + j] = (float) Math.sin(0.37 * pos + 1.3 * tokens[r] + 0.71 * j);
                }
            }
            cache.advance(tokens.length);
            return out;
        }
    }

    private record Visit(int index, int target, List<Float> logits) {}

    private static List<Visit> visits(int[] tokens, int ctx, ScoringMode mode, int chunk) {
        List<Visit> out = new ArrayList<>();
        LanguageModel m = new PositionalModel();
        WindowScorer.run(m, tokens, ctx, mode, chunk, (i, target, logits, off) -> {
            List<Float> row = new ArrayList<>();
            for (int j = 0; j < m.config().vocabSize(); j++) {
                row.add(logits[off + j]);
            }
            out.add(new Visit(i, target, row));
        });
        return out;
    }

    @Test
    void chunkedWindowsVisitWhatOnePassVisits() {
        int[] tokens = new SplittableRandom(2).ints(203, 0, 11).toArray();
        for (ScoringMode mode : ScoringMode.values()) {
            for (int ctx : new int[] {16, 50, 64}) {
                List<Visit> whole = visits(tokens, ctx, mode, 1 << 20);
                for (int chunk : new int[] {1, 3, 7, 16, 49}) {
                    assertEquals(whole, visits(tokens, ctx, mode, chunk), mode + " ctx " + ctx + " chunk " + chunk);
                }
            }
        }
    }
}
