package qlab.engine.train;

import java.util.LinkedHashMap;
import java.util.Map;
import qlab.engine.QlabException;

/**
 * The hyperparameters of a training run. Everything here, with the data and the model config,
 * fixes the bytes of the result; the thread count does not.
 *
 * @param steps           optimizer steps
 * @param batchTokens     tokens predicted per step (rounded down to whole sequences of seqLen)
 * @param seqLen          positions per sequence
 * @param lr              peak learning rate, reached at the end of the warm-up
 * @param warmup          steps of linear warm-up from lr / warmup
 * @param weightDecay     AdamW's decoupled decay, on matrices only (not norms, not biases)
 * @param seed            initial weights and batch order
 * @param minLrRatio      the cosine decay ends at lr × this
 * @param clip            global gradient norm above which gradients are scaled down to it
 * @param evalEvery       steps between validation losses (and the last step)
 * @param evalTokens      validation tokens scored each time (whole sequences, from the start of the split)
 * @param checkpointEvery steps between checkpoints
 * @param microTokens     tokens per forward/backward pass; a step accumulates several (bounds memory)
 */
public record TrainOptions(int steps, int batchTokens, int seqLen, double lr, int warmup, double weightDecay,
                           long seed, double minLrRatio, double clip, int evalEvery, int evalTokens,
                           int checkpointEvery, int microTokens) {

    public static final double BETA1 = 0.9;
    public static final double BETA2 = 0.95;
    public static final double ADAM_EPS = 1e-8;

    public TrainOptions {
        check(steps > 0, "steps", "must be positive, got " + steps);
        check(seqLen > 1, "seq-len", "must be at least 2, got " + seqLen);
        check(batchTokens >= seqLen, "batch-tokens", "must be at least seq-len (" + seqLen + "), got " + batchTokens);
        check(lr > 0 && Double.isFinite(lr), "lr", "must be positive, got " + lr);
        check(warmup >= 0, "warmup", "must not be negative, got " + warmup);
        check(weightDecay >= 0, "weight-decay", "must not be negative, got " + weightDecay);
        check(minLrRatio >= 0 && minLrRatio <= 1, "min-lr-ratio", "must be in [0, 1], got " + minLrRatio);
        check(clip > 0, "clip", "must be positive, got " + clip);
        check(evalEvery > 0, "eval-every", "must be positive, got " + evalEvery);
        check(evalTokens >= 0, "eval-tokens", "must not be negative, got " + evalTokens);
        check(checkpointEvery > 0, "checkpoint-every", "must be positive, got " + checkpointEvery);
        check(microTokens >= seqLen, "micro-tokens", "must be at least seq-len (" + seqLen + "), got " + microTokens);
    }

    private static void check(boolean ok, String option, String message) {
        if (!ok) {
            throw new QlabException("train: --" + option + " " + message);
        }
    }

    /** Sequences per step. */
    public int sequencesPerStep() {
        return batchTokens / seqLen;
    }

    /** Sequences per forward/backward pass. */
    public int sequencesPerPass() {
        return Math.max(1, Math.min(sequencesPerStep(), microTokens / seqLen));
    }

    /** Learning rate of step s (0-based): linear warm-up, then cosine decay to lr × minLrRatio at the last step. */
    public double learningRate(int s) {
        if (s < warmup) {
            return lr * (s + 1) / warmup;
        }
        double progress = steps - warmup <= 1 ? 1.0 : (double) (s - warmup) / (steps - warmup - 1);
        return lr * (minLrRatio + (1 - minLrRatio) * 0.5 * (1 + StrictMath.cos(Math.PI * progress)));
    }

    public Map<String, Object> describe() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("steps", steps);
        m.put("batch_tokens", batchTokens);
        m.put("seq_len", seqLen);
        m.put("lr", lr);
        m.put("warmup", warmup);
        m.put("weight_decay", weightDecay);
        m.put("seed", seed);
        m.put("min_lr_ratio", minLrRatio);
        m.put("clip", clip);
        m.put("eval_every", evalEvery);
        m.put("eval_tokens", evalTokens);
        m.put("checkpoint_every", checkpointEvery);
        m.put("micro_tokens", microTokens);
        m.put("adam_beta1", BETA1);
        m.put("adam_beta2", BETA2);
        m.put("adam_eps", ADAM_EPS);
        return m;
    }
}
