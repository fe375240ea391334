package qlab.engine.eval;

import java.util.Arrays;
import java.util.List;
import qlab.engine.model.KvCache;
import qlab.engine.model.LanguageModel;
import qlab.engine.model.Transformer;

/**
 * Runs a model over the windows of a token stream, each window as batched prefills (not token by
 * token) of at most {@link Transformer#DEFAULT_PREFILL_CHUNK} rows, and hands the logits of every
 * scored prediction to a visitor. Memory is bounded whatever the context: the logits of one pass
 * (chunk × vocab floats) and the window's KV cache, never a window's logits at once.
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
        return run(model, tokens, ctx, mode, Transformer.DEFAULT_PREFILL_CHUNK, visitor);
    }

    /** As {@link #run(LanguageModel, int[], int, ScoringMode, Visitor)}, with passes of at most {@code chunk} rows. */
    public static Work run(LanguageModel model, int[] tokens, int ctx, ScoringMode mode, int chunk, Visitor visitor) {
        if (chunk < 1) {
            throw new IllegalArgumentException("chunk " + chunk);
        }
        List<Windows.Window> windows = Windows.plan(tokens.length, ctx, mode);
        int vocab = model.config().vocabSize();
        KvCache cache = model.newCache(ctx);
        int index = 0;
        long processed = 0;
        long t0 = System.nanoTime();
        for (Windows.Window w : windows) {
            cache.clear();
            int[] ids = Arrays.copyOfRange(tokens, w.start(), w.start() + w.length());
            // Row r's logits predict ids[r + 1]: rows firstScored-1 .. length-2 are scored.
            for (int a = 0; a < w.length(); a += chunk) {
                int b = Math.min(w.length(), a + chunk);
                int firstRow = Math.min(Math.max(a, w.firstScored() - 1), b - 1); // a pass returns at least its last row
                float[] logits = model.forward(Arrays.copyOfRange(ids, a, b), cache, firstRow - a);
                for (int r = Math.max(firstRow, w.firstScored() - 1); r < Math.min(b, w.length() - 1); r++) {
                    visitor.visit(index++, ids[r + 1], logits, (r - firstRow) * vocab);
                }
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
