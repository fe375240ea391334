package qlab.engine.train;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import qlab.engine.model.KvCache;
import qlab.engine.model.ModelConfig;
import qlab.engine.model.ReferenceModel;
import qlab.engine.model.Transformer;
import qlab.engine.util.WorkerPool;

/**
 * The training forward pass against the engine's, and every parameter kind's gradient against
 * central finite differences of the float64 loss ({@link ReferenceModel}'s arithmetic, then
 * cross-entropy in double).
 */
class GradientCheckTest {

    static ModelConfig tiny(boolean tied, int vocab) {
        // 4 query heads over 2 KV heads: the GQA mapping is exercised.
        return new ModelConfig(16, 24, 2, 4, 2, 4, vocab, 1e-6, 10000.0, tied, 64, "float32");
    }

    /** Weights large enough that every path matters (init's 0.02 leaves attention nearly uniform). */
    static Parameters randomParameters(ModelConfig c, long seed) {
        Parameters p = Parameters.zeros(c);
        SplitMix64 r = new SplitMix64(seed);
        for (Parameters.Tensor t : p.list()) {
            float[] d = t.data();
            boolean norm = t.name().endsWith("norm.weight");
            for (int i = 0; i < d.length; i++) {
                double g = r.nextGaussian();
                d[i] = (float) (norm ? 1 + 0.2 * g : (t.isMatrix() ? 0.35 : 0.2) * g);
            }
        }
        return p;
    }

    static int[] randomTokens(int count, int vocab, long seed) {
        SplitMix64 r = new SplitMix64(seed);
        int[] t = new int[count];
        for (int i = 0; i < count; i++) {
            t[i] = r.nextInt(vocab);
        }
        return t;
    }

    /** The mean token loss in float64: ReferenceModel's logits per row, log-softmax in double. */
    static double referenceLoss(Parameters p, int[] tokens, int seqs, int len) {
        ReferenceModel ref = new ReferenceModel(p.toModel());
        double total = 0;
        for (int s = 0; s < seqs; s++) {
            int[] in = java.util.Arrays.copyOfRange(tokens, s * (len + 1), s * (len + 1) + len);
            double[][] logits = ref.logits(in);
            for (int t = 0; t < len; t++) {
                double max = Double.NEGATIVE_INFINITY;
                for (double v : logits[t]) {
                    max = Math.max(max, v);
                }
                double sum = 0;
                for (double v : logits[t]) {
                    sum += Math.exp(v - max);
                }
                total += Math.log(sum) + max - logits[t][tokens[s * (len + 1) + t + 1]];
            }
        }
        return total / (seqs * len);
    }

    @ParameterizedTest(name = "tied head {0}")
    @ValueSource(booleans = {true, false})
    void everyParameterKindMatchesFiniteDifferences(boolean tied) {
        ModelConfig c = tiny(tied, 23);
        int seqs = 2;
        int len = 6;
        Parameters p = randomParameters(c, 11);
        int[] tokens = randomTokens(seqs * (len + 1), c.vocabSize(), 12);
        Parameters grads = Parameters.zeros(c);
        try (WorkerPool pool = new WorkerPool(2)) {
            TrainingModel m = new TrainingModel(c, pool);
            double loss = m.forwardBackward(p, grads, tokens, seqs, len, 1f / (seqs * len));
            assertEquals(referenceLoss(p, tokens, seqs, len), loss / (seqs * len), 1e-5);
        }
        SplitMix64 pick = new SplitMix64(13);
        List<String> kinds = new ArrayList<>();
        for (Parameters.Tensor t : p.list()) {
            if (!t.name().contains("layers.") || t.name().contains("layers.0.")) {
                kinds.add(t.name());
            }
        }
        // Layer 1 too, for the matrices whose gradient flows through a later layer.
        kinds.add("model.layers.1.self_attn.q_proj.weight");
        kinds.add("model.layers.1.mlp.down_proj.weight");
        for (String name : kinds) {
            float[] w = p.get(name);
            float[] g = grads.get(name);
            for (int sample = 0; sample < 6; sample++) {
                int i = pick.nextInt(w.length);
                if (name.endsWith("embed_tokens.weight") && sample < 3) {
                    // A row of a token that occurs: its gradient is not zero.
                    i = tokens[pick.nextInt(tokens.length)] * c.hiddenSize() + pick.nextInt(c.hiddenSize());
                }
                float orig = w[i];
                float plus = (float) (orig + 1e-3);
                float minus = (float) (orig - 1e-3);
                w[i] = plus;
                double lp = referenceLoss(p, tokens, seqs, len);
                w[i] = minus;
                double lm = referenceLoss(p, tokens, seqs, len);
                w[i] = orig;
                double fd = (lp - lm) / ((double) plus - minus);
                double err = Math.abs(g[i] - fd);
                assertTrue(err <= 2e-5 + 2e-3 * Math.abs(fd),
                        name + "[" + i + "]: backward " + g[i] + ", finite difference " + fd);
            }
        }
    }

    @Test
    void trainingLogitsAreTheEngineForwardPass() {
        // 40 positions: the forward products take the token tiles (32 rows and more), as in training.
        ModelConfig c = new ModelConfig(32, 48, 2, 4, 2, 8, 50, 1e-6, 10000.0, false, 64, "float32");
        Parameters p = randomParameters(c, 21);
        int seqs = 2;
        int len = 40;
        int[] tokens = randomTokens(seqs * (len + 1), c.vocabSize(), 22);
        try (WorkerPool pool = new WorkerPool(2)) {
            float[] logits = new TrainingModel(c, pool).logits(p, tokens, seqs, len);
            Transformer engine = new Transformer(p.toModel(), pool);
            double worst = 0;
            for (int s = 0; s < seqs; s++) {
                int[] in = java.util.Arrays.copyOfRange(tokens, s * (len + 1), s * (len + 1) + len);
                KvCache cache = engine.newCache(len);
                float[] expected = engine.forward(in, cache, true);
                for (int i = 0; i < expected.length; i++) {
                    worst = Math.max(worst, Math.abs(expected[i] - logits[s * len * c.vocabSize() + i]));
                }
            }
            assertTrue(worst <= 1e-4, "largest logit difference " + worst);
        }
    }
}
