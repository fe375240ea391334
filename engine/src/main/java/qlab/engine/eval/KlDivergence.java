package qlab.engine.eval;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import qlab.engine.QlabException;
import qlab.engine.model.LanguageModel;
import qlab.engine.util.Progress;

/**
 * A model scored against a reference baseline over the same text and windows, reporting what
 * llama-perplexity --kl-divergence reports so the figures can be compared: KL(reference || model)
 * with its uncertainty and percentiles, the same-top-token rate with its binomial error, the
 * change in probability of the reference's top token, the perplexity ratio in log space (the
 * per-token differences carry the correlation of the two runs, so its error is far below that of
 * either perplexity), and the relative RMS error of the centred logits (full baselines).
 */
public final class KlDivergence {

    /** Percentile points reported, as fractions. */
    public static final double[] PERCENTILES = {1.0, 0.999, 0.99, 0.95, 0.90, 0.5, 0.10, 0.05, 0.01, 0.0};

    public record Stat(double mean, double se, double rms, double[] percentiles) {
        static Stat of(double[] v) {
            int n = v.length;
            double sum = 0;
            double sq = 0;
            for (double d : v) {
                sum += d;
                sq += d * d;
            }
            double mean = sum / n;
            double var = 0;
            for (double d : v) {
                var += (d - mean) * (d - mean);
            }
            double se = n > 1 ? Math.sqrt(var / (n - 1) / n) : Double.NaN;
            double[] sorted = v.clone();
            Arrays.sort(sorted);
            double[] p = new double[PERCENTILES.length];
            for (int i = 0; i < p.length; i++) {
                p[i] = interpolate(sorted, PERCENTILES[i]);
            }
            return new Stat(mean, se, Math.sqrt(sq / n), p);
        }

        /** The q-quantile of sorted values, linear between neighbours. */
        static double interpolate(double[] sorted, double q) {
            double at = q * (sorted.length - 1);
            int lo = (int) Math.floor(at);
            int hi = Math.min(sorted.length - 1, lo + 1);
            return sorted[lo] + (at - lo) * (sorted[hi] - sorted[lo]);
        }

        public double percentile(double q) {
            for (int i = 0; i < PERCENTILES.length; i++) {
                if (PERCENTILES[i] == q) {
                    return percentiles[i];
                }
            }
            throw new IllegalArgumentException("not a reported percentile: " + q);
        }

        Map<String, Object> toMap() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("mean", mean);
            m.put("se", se);
            m.put("rms", rms);
            for (int i = 0; i < PERCENTILES.length; i++) {
                String name = PERCENTILES[i] == 1.0 ? "max" : PERCENTILES[i] == 0.0 ? "min"
                        : PERCENTILES[i] == 0.5 ? "median" : "p" + trim(100 * PERCENTILES[i]);
                m.put(name, percentiles[i]);
            }
            return m;
        }
    }

    public record Result(
            int tokens,
            Stat kl,
            double top1Agree,
            double top1AgreeSe,
            Stat deltaP,
            double pplBase,
            double pplBaseSe,
            double pplModel,
            double pplModelSe,
            double lnPplRatio,
            double lnPplRatioSe,
            double logitRelRmse,
            String baselineKind,
            WindowScorer.Work work) {

        public double pplRatio() {
            return Math.exp(lnPplRatio);
        }

        public Map<String, Object> toMap() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("tokens", tokens);
            m.put("baseline", baselineKind);
            m.put("kl", kl.toMap());
            m.put("top1_agree", top1Agree);
            m.put("top1_agree_se", top1AgreeSe);
            m.put("delta_p_top1", deltaP.toMap());
            m.put("ppl_base", pplBase);
            m.put("ppl_base_se", pplBaseSe);
            m.put("ppl", pplModel);
            m.put("ppl_se", pplModelSe);
            m.put("ppl_ratio", pplRatio());
            m.put("ppl_ratio_se", pplRatio() * lnPplRatioSe);
            m.put("ln_ppl_ratio", lnPplRatio);
            m.put("ln_ppl_ratio_se", lnPplRatioSe);
            m.put("logit_rel_rmse", Double.isNaN(logitRelRmse) ? null : logitRelRmse);
            m.put("tokens_per_second", work.tokensPerSecond());
            return m;
        }
    }

    private KlDivergence() {}

    public static Result compare(LanguageModel model, LogProbBaseline base, int[] tokens, int ctx, ScoringMode mode) {
        return compare(model, base, tokens, ctx, mode, Progress.NONE);
    }

    /** {@link #compare}, reporting the tokens put through the model ({@link WindowScorer#tokensProcessed}). */
    public static Result compare(LanguageModel model, LogProbBaseline base, int[] tokens, int ctx, ScoringMode mode,
                                 Progress progress) {
        int vocab = model.config().vocabSize();
        if (vocab != base.vocab()) {
            throw new QlabException(base.path() + ": the baseline has vocabulary " + base.vocab() + ", the model " + vocab);
        }
        int n = Windows.scoredCount(Windows.plan(tokens.length, ctx, mode));
        if (n != base.positions()) {
            throw new QlabException(base.path() + ": the baseline has " + base.positions() + " positions, this text and ctx give " + n);
        }
        double[] kl = new double[n];
        double[] dp = new double[n];
        double[] nllModel = new double[n];
        double[] nllBase = new double[n];
        boolean[] agree = new boolean[n];
        double[] sqErr = new double[1];
        double[] sqRef = new double[1];
        boolean full = base.kind() == LogProbBaseline.Kind.FULL;
        boolean[] inTop = full ? null : new boolean[vocab];
        WindowScorer.Work work;
        try (LogProbBaseline.Reader ref = base.reader()) {
            work = WindowScorer.run(model, tokens, ctx, mode, (i, target, logits, off) -> {
                ref.load(i);
                if (ref.target() != target) {
                    throw new QlabException(base.path() + ": position " + i + " scores token " + ref.target()
                            + ", this text has " + target + " (the baseline was made from another text)");
                }
                double lse = WindowScorer.logSumExp(logits, off, vocab);
                int best = 0;
                for (int j = 1; j < vocab; j++) {
                    if (logits[off + j] > logits[off + best]) {
                        best = j;
                    }
                }
                int refTop = ref.argmax();
                agree[i] = best == refTop;
                nllModel[i] = lse - logits[off + target];
                nllBase[i] = -ref.targetLogProb();
                double d = 0;
                if (full) {
                    double meanB = 0;
                    double meanQ = 0;
                    for (int j = 0; j < vocab; j++) {
                        double lb = ref.logProb(j);
                        double lq = logits[off + j] - lse;
                        d += Math.exp(lb) * (lb - lq);
                        meanB += lb;
                        meanQ += lq;
                    }
                    meanB /= vocab;
                    meanQ /= vocab;
                    double e = 0;
                    double r = 0;
                    for (int j = 0; j < vocab; j++) {
                        double cb = ref.logProb(j) - meanB;
                        double cq = logits[off + j] - lse - meanQ;
                        e += (cq - cb) * (cq - cb);
                        r += cb * cb;
                    }
                    sqErr[0] += e;
                    sqRef[0] += r;
                    dp[i] = Math.exp(logits[off + refTop] - lse) - Math.exp(ref.logProb(refTop));
                } else {
                    double massQ = 0;
                    for (int k = 0; k < base.topK(); k++) {
                        int id = ref.topId(k);
                        inTop[id] = true;
                        double lb = ref.topLogProb(k);
                        double lq = logits[off + id] - lse;
                        d += Math.exp(lb) * (lb - lq);
                        massQ += Math.exp(lq);
                    }
                    double tailB = ref.tailMass();
                    double tailQ = 0;
                    for (int j = 0; j < vocab; j++) {
                        if (!inTop[j]) {
                            tailQ += Math.exp(logits[off + j] - lse);
                        }
                    }
                    for (int k = 0; k < base.topK(); k++) {
                        inTop[ref.topId(k)] = false;
                    }
                    if (tailB > 0 && tailQ > 0) {
                        d += tailB * (Math.log(tailB) - Math.log(tailQ));
                    }
                    dp[i] = Math.exp(logits[off + refTop] - lse) - Math.exp(ref.topLogProb(0));
                }
                // tiny negative values are float round-off of a zero divergence
                kl[i] = Math.max(0, d);
            }, progress);
        }
        int agreeCount = 0;
        for (boolean a : agree) {
            agreeCount += a ? 1 : 0;
        }
        double p = (double) agreeCount / n;
        double[] diff = new double[n];
        for (int i = 0; i < n; i++) {
            diff[i] = nllModel[i] - nllBase[i];
        }
        Perplexity.Result pq = Perplexity.summarize(nllModel, work);
        Perplexity.Result pb = Perplexity.summarize(nllBase, work);
        Stat ratio = Stat.of(diff);
        return new Result(n, Stat.of(kl), p, Math.sqrt(p * (1 - p) / n), Stat.of(dp),
                pb.ppl(), pb.pplSe(), pq.ppl(), pq.pplSe(), ratio.mean(), ratio.se(),
                full ? Math.sqrt(sqErr[0] / sqRef[0]) : Double.NaN,
                base.kind().name().toLowerCase(), work);
    }

    private static String trim(double v) {
        String s = String.format(java.util.Locale.ROOT, "%.1f", v);
        return s.endsWith(".0") ? s.substring(0, s.length() - 2) : s.replace('.', '_');
    }
}
