package qlab.engine.bench;

import java.util.SplittableRandom;
import qlab.engine.model.Greedy;
import qlab.engine.model.KvCache;
import qlab.engine.model.Transformer;

/**
 * Batched decode: B sequences, each with its own KV cache and its own prompt length, decode in
 * lock-step; each step reads every weight once for all B. Prefill is not timed.
 */
public final class BatchBench {

    /** tokens/s over all sequences, and milliseconds per lock-step, as median/min/max over reps. */
    public record Result(int batch, SingleStreamBench.Stats tps, SingleStreamBench.Stats msPerStep) {}

    private BatchBench() {}

    public static Result run(Transformer model, int batch, int promptTokens, int steps, int reps, long seed) {
        int vocab = model.config().vocabSize();
        SplittableRandom rng = new SplittableRandom(seed);
        int[][] prompts = new int[batch][];
        for (int b = 0; b < batch; b++) {
            // different prompt lengths, so the sequences sit at different positions
            prompts[b] = rng.ints(promptTokens + (b * 7) % Math.max(1, promptTokens), 0, vocab).toArray();
        }
        KvCache[] caches = new KvCache[batch];
        for (int b = 0; b < batch; b++) {
            caches[b] = model.newCache(prompts[b].length + steps + 1);
        }
        double[] tps = new double[reps];
        double[] ms = new double[reps];
        int[] next = new int[batch];
        for (int rep = -1; rep < reps; rep++) {
            for (int b = 0; b < batch; b++) {
                caches[b].clear();
                next[b] = Greedy.argmax(model.prefill(prompts[b], caches[b], Transformer.DEFAULT_PREFILL_CHUNK), 0, vocab);
            }
            long t0 = System.nanoTime();
            for (int s = 0; s < steps; s++) {
                float[] logits = model.decodeBatch(next, caches);
                for (int b = 0; b < batch; b++) {
                    next[b] = Greedy.argmax(logits, b * vocab, vocab);
                }
            }
            long dt = System.nanoTime() - t0;
            if (rep >= 0) {
                tps[rep] = (double) batch * steps * 1e9 / dt;
                ms[rep] = dt / 1e6 / steps;
            }
        }
        return new Result(batch, SingleStreamBench.Stats.of(tps), SingleStreamBench.Stats.of(ms));
    }
}
