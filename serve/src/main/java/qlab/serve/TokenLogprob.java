package qlab.serve;

import qlab.engine.eval.LogSumExp;

/**
 * One token and its log-probability under the model (log-softmax of the raw logits, as ppl scores
 * tokens), with the most likely alternatives when they were asked for.
 *
 * @param topIds      the {@code topIds.length} most likely ids, most likely first (ties: lower id first); empty when not asked
 * @param topLogprobs their log-probabilities
 */
public record TokenLogprob(int id, double logprob, int[] topIds, double[] topLogprobs) {

    /** The log-probability of {@code id} in logits[offset .. offset + vocab), and the {@code top} best alternatives. */
    static TokenLogprob of(float[] logits, int offset, int vocab, int id, int top) {
        double lse = LogSumExp.of(logits, offset, vocab);
        int[] ids = topIds(logits, offset, vocab, top);
        double[] lps = new double[ids.length];
        for (int i = 0; i < ids.length; i++) {
            lps[i] = logits[offset + ids[i]] - lse;
        }
        return new TokenLogprob(id, logits[offset + id] - lse, ids, lps);
    }

    /** The {@code k} largest logits' ids by a single pass with an insertion-sorted list (k is at most 20). */
    private static int[] topIds(float[] logits, int offset, int vocab, int k) {
        k = Math.min(k, vocab);
        int[] best = new int[k];
        if (k == 0) {
            return best;
        }
        int filled = 0;
        for (int i = 0; i < vocab; i++) {
            float v = logits[offset + i];
            if (filled == k && !(v > logits[offset + best[k - 1]])) {
                continue;
            }
            int j = filled < k ? filled++ : k - 1;
            while (j > 0 && v > logits[offset + best[j - 1]]) {
                best[j] = best[j - 1];
                j--;
            }
            best[j] = i;
        }
        return best;
    }
}
