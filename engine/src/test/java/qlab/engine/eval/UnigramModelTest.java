package qlab.engine.eval;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import qlab.engine.QlabException;

class UnigramModelTest {

    @Test
    void addOneSmoothingByHand() {
        // vocabulary 4; counted 0,0,1,2,0: N = 5, counts 3,1,1,0, so p = (c + 1) / (N + V) = 4/9, 2/9, 2/9, 1/9
        UnigramModel u = UnigramModel.fit(new int[] {0, 0, 1, 2, 0}, 4);
        assertEquals(5, u.tokensCounted());
        assertEquals(Math.log(9 / 4.0), u.nll(0), 1e-15);
        assertEquals(Math.log(9.0), u.nll(3), 1e-15);

        // stream 1,0,3,0,2 in windows of 3, every token but each window's first: [1,0,3] scores 0,3; [0,2] scores 2
        int[] stream = {1, 0, 3, 0, 2};
        assertArrayEquals(new int[] {0, 3, 2}, Windows.scoredTargets(stream, 3, ScoringMode.ALL));
        Perplexity.Result r = u.perplexity(stream, 3, ScoringMode.ALL);
        // PPL = (4/9 · 1/9 · 2/9)^(-1/3) = (8/729)^(-1/3) = 9/2
        assertEquals(3, r.tokensScored());
        assertEquals(4.5, r.ppl(), 1e-12);
        double[] nll = {Math.log(9 / 4.0), Math.log(9.0), Math.log(9 / 2.0)};
        double mean = Math.log(4.5);
        double ss = 0;
        for (double d : nll) {
            ss += (d - mean) * (d - mean);
        }
        assertEquals(Math.sqrt(ss / 2 / 3), r.meanNllSe(), 1e-12);
        assertEquals(4.5 * r.meanNllSe(), r.pplSe(), 1e-12);

        // second-half, ctx 4 over 9 tokens: full windows [0,4) and [4,8) score positions 3 and 7; [8,9) is not full
        assertArrayEquals(new int[] {3, 7}, Windows.scoredTargets(new int[] {0, 1, 2, 3, 4, 5, 6, 7, 8}, 4, ScoringMode.SECOND_HALF));
    }

    @Test
    void scoresTheTokensPerplexityScores() {
        // A model whose every logits row is the unigram's log-probabilities scores each token as the unigram does,
        // so the two per-token NLL lists agree position by position only if both score the same tokens.
        int vocab = 50;
        SplittableRandom rnd = new SplittableRandom(7);
        UnigramModel u = UnigramModel.fit(rnd.ints(400, 0, vocab / 2).toArray(), vocab);
        float[] logProbs = new float[vocab];
        for (int j = 0; j < vocab; j++) {
            logProbs[j] = (float) -u.nll(j);
        }
        ScriptedModel asUnigram = new ScriptedModel(vocab, (w, p, out) -> System.arraycopy(logProbs, 0, out, 0, vocab));
        int[] text = rnd.ints(300, 0, vocab).toArray();
        for (ScoringMode mode : ScoringMode.values()) {
            Perplexity.Result model = Perplexity.run(asUnigram, text, 64, mode);
            Perplexity.Result unigram = u.perplexity(text, 64, mode);
            assertEquals(model.tokensScored(), unigram.tokensScored(), mode.id());
            assertArrayEquals(model.nll(), unigram.nll(), 1e-5, mode.id());
        }
    }

    @Test
    void idsOutsideTheVocabularyAreErrors() {
        assertThrows(QlabException.class, () -> UnigramModel.fit(new int[] {0, 4}, 4));
        assertThrows(QlabException.class, () -> UnigramModel.fit(new int[] {0}, 4).nll(-1));
    }
}
