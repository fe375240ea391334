package qlab.engine.eval;

import qlab.engine.QlabException;
import qlab.engine.model.LanguageModel;
import qlab.engine.util.Progress;

/**
 * Perplexity over non-overlapping windows: negative log-likelihood from the log-softmax computed
 * directly (logsumexp minus the target's logit, never the log of a softmax), accumulated in
 * float64; the standard error of the mean NLL carried to the perplexity by the delta method.
 */
public final class Perplexity {

    public record Result(int tokensScored, double meanNll, double meanNllSe, double ppl, double pplSe,
            double[] nll, WindowScorer.Work work) {}

    private Perplexity() {}

    public static Result run(LanguageModel model, int[] tokens, int ctx, ScoringMode mode) {
        return run(model, tokens, ctx, mode, Progress.NONE);
    }

    /** {@link #run}, reporting the tokens put through the model ({@link WindowScorer#tokensProcessed}). */
    public static Result run(LanguageModel model, int[] tokens, int ctx, ScoringMode mode, Progress progress) {
        int vocab = model.config().vocabSize();
        int n = Windows.scoredCount(Windows.plan(tokens.length, ctx, mode));
        double[] nll = new double[n];
        WindowScorer.Work work = WindowScorer.run(model, tokens, ctx, mode,
                (i, target, logits, off) -> nll[i] = WindowScorer.logSumExp(logits, off, vocab) - logits[off + target],
                progress);
        for (double d : nll) {
            if (!Double.isFinite(d)) {
                throw new QlabException("the model produced a non-finite log-likelihood (NaN or infinite logits)");
            }
        }
        return summarize(nll, work);
    }

    public static Result summarize(double[] nll, WindowScorer.Work work) {
        int n = nll.length;
        double sum = 0;
        for (double d : nll) {
            sum += d;
        }
        double mean = sum / n;
        double ss = 0;
        for (double d : nll) {
            ss += (d - mean) * (d - mean);
        }
        double se = n > 1 ? Math.sqrt(ss / (n - 1) / n) : Double.NaN;
        double ppl = Math.exp(mean);
        return new Result(n, mean, se, ppl, ppl * se, nll, work);
    }
}
