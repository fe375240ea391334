package qlab.engine.eval;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import qlab.engine.QlabException;
import qlab.engine.model.Model;
import qlab.engine.model.Transformer;
import qlab.engine.testing.Fixtures;
import qlab.engine.util.WorkerPool;

class KlDivergenceTest {

    @TempDir
    Path tmp;

    private static final int VOCAB = 50;

    /** Deterministic pseudo-random logits per (window position, token of the window). */
    private static float base(int[] w, int p, int j) {
        long h = (w[p] * 31L + p) * 1_000_003L + j * 7919L;
        return (float) (new SplittableRandom(h).nextGaussian() * 2);
    }

    private static ScriptedModel baseModel() {
        return new ScriptedModel(VOCAB, (w, p, out) -> {
            for (int j = 0; j < VOCAB; j++) {
                out[j] = base(w, p, j);
            }
        });
    }

    /** The base logits plus a known perturbation. */
    private static ScriptedModel perturbed() {
        return new ScriptedModel(VOCAB, (w, p, out) -> {
            for (int j = 0; j < VOCAB; j++) {
                out[j] = base(w, p, j) + (float) (0.3 * Math.sin(j + p));
            }
        });
    }

    private static double[] logSoftmax(float[] l) {
        double max = Double.NEGATIVE_INFINITY;
        for (float v : l) {
            max = Math.max(max, v);
        }
        double s = 0;
        for (float v : l) {
            s += Math.exp(v - max);
        }
        double[] out = new double[l.length];
        for (int i = 0; i < l.length; i++) {
            out[i] = l[i] - max - Math.log(s);
        }
        return out;
    }

    @Test
    void klOfAModelAgainstItselfIsZero() {
        try (WorkerPool pool = new WorkerPool(2)) {
            Model model = Model.load(Fixtures.oracle().resolve("tiny-qwen2/bf16"));
            Transformer tf = new Transformer(model, pool);
            int[] ids = new SplittableRandom(3).ints(260, 0, 1024).toArray();
            for (LogProbBaseline.Kind kind : LogProbBaseline.Kind.values()) {
                LogProbBaseline b = LogProbBaseline.create(tf, ids, 128, ScoringMode.SECOND_HALF, kind, 16, "k",
                        tmp.resolve(kind + ".bin"));
                KlDivergence.Result r = KlDivergence.compare(tf, b, ids, 128, ScoringMode.SECOND_HALF);
                assertEquals(0, r.kl().mean(), 1e-6, kind.name());
                assertEquals(1.0, r.top1Agree());
                assertEquals(1.0, r.pplRatio(), 1e-6);
                assertEquals(0, r.deltaP().rms(), 1e-6);
                if (kind == LogProbBaseline.Kind.FULL) {
                    assertEquals(0, r.logitRelRmse(), 1e-6);
                }
            }
        }
    }

    @Test
    void klAgainstAKnownPerturbationMatchesAHandComputation() {
        int[] ids = new SplittableRandom(5).ints(200, 0, VOCAB).toArray();
        int ctx = 40;
        LogProbBaseline full = LogProbBaseline.create(baseModel(), ids, ctx, ScoringMode.ALL, LogProbBaseline.Kind.FULL, 0, "k",
                tmp.resolve("full.bin"));
        KlDivergence.Result r = KlDivergence.compare(perturbed(), full, ids, ctx, ScoringMode.ALL);
        // by hand: every window position p >= 1 predicts window[p] from row p-1
        double sum = 0;
        double diffNll = 0;
        int n = 0;
        int agree = 0;
        for (int start = 0; start < ids.length; start += ctx) {
            int[] w = java.util.Arrays.copyOfRange(ids, start, Math.min(ids.length, start + ctx));
            for (int p = 1; p < w.length; p++) {
                float[] lb = new float[VOCAB];
                float[] lq = new float[VOCAB];
                int pb = 0;
                int pq = 0;
                for (int j = 0; j < VOCAB; j++) {
                    lb[j] = base(w, p - 1, j);
                    lq[j] = base(w, p - 1, j) + (float) (0.3 * Math.sin(j + p - 1));
                    pb = lb[j] > lb[pb] ? j : pb;
                    pq = lq[j] > lq[pq] ? j : pq;
                }
                double[] b = logSoftmax(lb);
                double[] q = logSoftmax(lq);
                for (int j = 0; j < VOCAB; j++) {
                    sum += Math.exp(b[j]) * (b[j] - q[j]);
                }
                diffNll += -q[w[p]] + b[w[p]];
                agree += pb == pq ? 1 : 0;
                n++;
            }
        }
        assertEquals(n, r.tokens());
        assertEquals(sum / n, r.kl().mean(), 1e-6 * sum / n + 1e-7);
        assertEquals(Math.exp(diffNll / n), r.pplRatio(), 1e-6);
        assertEquals((double) agree / n, r.top1Agree(), 1e-12);
        assertTrue(r.kl().mean() > 0.01, "the perturbation is not negligible: " + r.kl().mean());
        assertTrue(r.lnPplRatioSe() < Math.log1p(r.pplModelSe() / r.pplModel()), "paired error below the unpaired one");

        // compact: a lower bound, exact when only one token is outside the top k
        LogProbBaseline compact = LogProbBaseline.create(baseModel(), ids, ctx, ScoringMode.ALL, LogProbBaseline.Kind.COMPACT, 8, "k",
                tmp.resolve("c8.bin"));
        double c8 = KlDivergence.compare(perturbed(), compact, ids, ctx, ScoringMode.ALL).kl().mean();
        assertTrue(c8 <= r.kl().mean() + 1e-9 && c8 > 0.3 * r.kl().mean(), "compact " + c8 + " vs exact " + r.kl().mean());
        LogProbBaseline nearlyAll = LogProbBaseline.create(baseModel(), ids, ctx, ScoringMode.ALL, LogProbBaseline.Kind.COMPACT,
                VOCAB - 1, "k", tmp.resolve("c49.bin"));
        assertEquals(r.kl().mean(), KlDivergence.compare(perturbed(), nearlyAll, ids, ctx, ScoringMode.ALL).kl().mean(), 1e-6);
    }

    @Test
    void aBaselineFromAnotherTextOrCtxIsRejected() {
        int[] ids = new SplittableRandom(5).ints(120, 0, VOCAB).toArray();
        LogProbBaseline b = LogProbBaseline.create(baseModel(), ids, 40, ScoringMode.ALL, LogProbBaseline.Kind.COMPACT, 4, "k",
                tmp.resolve("b.bin"));
        int[] other = ids.clone();
        other[5] = (other[5] + 1) % VOCAB;
        assertTrue(assertThrows(QlabException.class, () -> KlDivergence.compare(perturbed(), b, other, 40, ScoringMode.ALL))
                .getMessage().contains("another text"));
        assertTrue(assertThrows(QlabException.class, () -> KlDivergence.compare(perturbed(), b, ids, 30, ScoringMode.ALL))
                .getMessage().contains("positions"));
    }

    @Test
    void recordsReadInAnyOrderAreTheOnesWritten() {
        int[] ids = new SplittableRandom(9).ints(90, 0, VOCAB).toArray();
        int ctx = 30;
        LogProbBaseline full = LogProbBaseline.create(baseModel(), ids, ctx, ScoringMode.ALL, LogProbBaseline.Kind.FULL, 0, "k",
                tmp.resolve("order.bin"));
        int n = full.positions();
        int[] targets = new int[n];
        float[] first = new float[n];
        try (LogProbBaseline.Reader r = full.reader()) {
            for (int p = 0; p < n; p++) {
                r.load(p);
                targets[p] = r.target();
                first[p] = r.logProb(0);
            }
            for (int p = n - 1; p >= 0; p -= 7) {
                r.load(p);
                assertEquals(targets[p], r.target());
                assertEquals(first[p], r.logProb(0));
                assertEquals(r.logProb(r.target()), r.targetLogProb());
            }
        }
        // window of 30: positions 1..29 of each window are scored, in order
        assertEquals(ids[1], targets[0]);
        assertEquals(ids[31], targets[29]);
    }

    @Test
    void aTruncatedBaselineIsRejectedNamingTheFile() throws Exception {
        int[] ids = new SplittableRandom(5).ints(60, 0, VOCAB).toArray();
        Path file = tmp.resolve("cut.bin");
        LogProbBaseline.create(baseModel(), ids, 30, ScoringMode.ALL, LogProbBaseline.Kind.COMPACT, 4, "k", file);
        try (var ch = java.nio.channels.FileChannel.open(file, java.nio.file.StandardOpenOption.WRITE)) {
            ch.truncate(ch.size() - 3);
        }
        String msg = assertThrows(QlabException.class, () -> LogProbBaseline.open(file)).getMessage();
        assertTrue(msg.startsWith(file.toString()) && msg.contains("truncated"), msg);
        java.nio.file.Files.write(file, new byte[] {1, 2, 3});
        msg = assertThrows(QlabException.class, () -> LogProbBaseline.open(file)).getMessage();
        assertTrue(msg.contains("bad magic"), msg);
    }
}
