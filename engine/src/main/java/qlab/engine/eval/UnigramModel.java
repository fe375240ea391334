package qlab.engine.eval;

import qlab.engine.QlabException;

/**
 * A unigram language model with add-one (Laplace) smoothing: every token is predicted with
 * p(t) = (count(t) + 1) / (N + V), whatever precedes it, where N tokens were counted and V is the
 * size of the vocabulary. It is the floor a trained model's perplexity is judged against: a model
 * that has learned nothing about context scores no better than this.
 */
public final class UnigramModel {

    private final long[] counts; // [vocab]
    private final long total;

    private UnigramModel(long[] counts, long total) {
        this.counts = counts;
        this.total = total;
    }

    /** Counts {@code tokens} over a vocabulary of {@code vocab} ids (every id must lie in [0, vocab)). */
    public static UnigramModel fit(int[] tokens, int vocab) {
        if (vocab < 1) {
            throw new IllegalArgumentException("vocabulary of " + vocab + " tokens");
        }
        long[] counts = new long[vocab];
        for (int t : tokens) {
            if (t < 0 || t >= vocab) {
                throw new QlabException("unigram: token id " + t + " is outside the vocabulary of " + vocab + " tokens");
            }
            counts[t]++;
        }
        return new UnigramModel(counts, tokens.length);
    }

    public int vocabSize() {
        return counts.length;
    }

    /** N: the tokens counted. */
    public long tokensCounted() {
        return total;
    }

    /** −ln p(token) = ln(N + V) − ln(count + 1). */
    public double nll(int token) {
        if (token < 0 || token >= counts.length) {
            throw new QlabException("unigram: token id " + token + " is outside the vocabulary of " + counts.length + " tokens");
        }
        return Math.log((double) total + counts.length) - Math.log(counts[token] + 1.0);
    }

    /**
     * Perplexity over exactly the tokens {@link Perplexity#run} scores for the same stream, ctx and
     * mode ({@link Windows#scoredTargets}), with the same statistics. No model runs: the work is
     * zero tokens in zero seconds.
     */
    public Perplexity.Result perplexity(int[] tokens, int ctx, ScoringMode mode) {
        int[] targets = Windows.scoredTargets(tokens, ctx, mode);
        double[] nll = new double[targets.length];
        for (int i = 0; i < targets.length; i++) {
            nll[i] = nll(targets[i]);
        }
        return Perplexity.summarize(nll, new WindowScorer.Work(targets.length, 0, 0));
    }
}
