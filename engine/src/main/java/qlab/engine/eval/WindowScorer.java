package qlab.engine.eval;

import java.util.Arrays;
import java.util.List;
import qlab.engine.model.KvCache;
import qlab.engine.model.LanguageModel;
import qlab.engine.util.Progress;

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
        return run(model, tokens, ctx, mode, visitor, Progress.NONE);
    }

    /** {@link #run}, reporting each window's tokens to {@code progress} as it is done. */
    public static Work run(LanguageModel model, int[] tokens, int ctx, ScoringMode mode, Visitor visitor, Progress progress) {
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
            progress.advance(w.length());
        }
        return new Work(index, processed, (System.nanoTime() - t0) / 1e9);
    }

    /** Tokens a run over {@code n} tokens puts through the model: the units it reports to a {@link Progress}. */
    public static long tokensProcessed(int n, int ctx, ScoringMode mode) {
        return Windows.plan(n, ctx, mode).stream().mapToLong(Windows.Window::length).sum();
    }

    /** log(sum(exp(logits[offset .. offset+n)))) in float64, shifted by the maximum: {@link LogSumExp}. */
    public static double logSumExp(float[] logits, int offset, int n) {
        return LogSumExp.of(logits, offset, n);
    }
}
