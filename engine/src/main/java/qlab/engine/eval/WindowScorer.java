package qlab.engine.eval;

import java.util.Arrays;
import java.util.List;
import qlab.engine.model.KvCache;
import qlab.engine.model.LanguageModel;

/**
 * Runs a model over the windows of a token stream, each window as one batched prefill (not token
 * by token), and hands the logits of every scored prediction to a visitor.
 */
public final class WindowScorer {

    /** One scored prediction: the logits row (at {@code offset}) that predicts {@code target}. */
    @FunctionalInterface
    public interface Visitor {
        void visit(int index, int target, float[] logits, int offset);
    }

    /** Tokens run through the model and seconds spent, for throughput figures. */
    public record Work(int scored, long tokensProcessed, double seconds) {
        public double tokensPerSecond() {
            return tokensProcessed / seconds;
        }
    }

    private WindowScorer() {}

    public static Work run(LanguageModel model, int[] tokens, int ctx, ScoringMode mode, Visitor visitor) {
        List<Windows.Window> windows = Windows.plan(tokens.length, ctx, mode);
        int vocab = model.config().vocabSize();
        KvCache cache = model.newCache(ctx);
        int index = 0;
        long processed = 0;
        long t0 = System.nanoTime();
        for (Windows.Window w : windows) {
            cache.clear();
            int[] ids = Arrays.copyOfRange(tokens, w.start(), w.start() + w.length());
            // logits rows firstScored-1 .. length-1; the last row predicts nothing inside the window
            float[] logits = model.forward(ids, cache, w.firstScored() - 1);
            for (int p = w.firstScored(); p < w.length(); p++) {
                visitor.visit(index++, ids[p], logits, (p - w.firstScored()) * vocab);
            }
            processed += w.length();
        }
        return new Work(index, processed, (System.nanoTime() - t0) / 1e9);
    }

    /** log(sum(exp(logits[offset .. offset+n)))) in float64, shifted by the maximum: {@link LogSumExp}. */
    public static double logSumExp(float[] logits, int offset, int n) {
        return LogSumExp.of(logits, offset, n);
    }
}
