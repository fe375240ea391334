package qlab.engine.bench;

import java.util.Arrays;
import java.util.SplittableRandom;
import qlab.engine.model.Greedy;
import qlab.engine.model.KvCache;
import qlab.engine.model.Transformer;

/**
 * Prefill and decode speed of one sequence: a prompt of random ids prefilled in passes of at most
 * a chunk of rows ({@link Transformer#DEFAULT_PREFILL_CHUNK} unless given), then
 * greedy decode one token at a time. One warm-up repetition, then {@code reps} timed ones; each
 * figure is reported as median, min and max over the repetitions.
 */
public final class SingleStreamBench {

    public record Stats(double median, double min, double max) {
        static Stats of(double[] v) {
            double[] s = v.clone();
            Arrays.sort(s);
            return new Stats(ReadBandwidth.median(s), s[0], s[s.length - 1]);
        }
    }

    /** prefill in tokens/s; decode in tokens/s (one sequence). */
    public record Result(int promptTokens, int decodeTokens, int reps, Stats prefillTps, Stats decodeTps) {}

    private SingleStreamBench() {}

    public static Result run(Transformer model, int promptTokens, int decodeTokens, int reps, long seed) {
        return run(model, promptTokens, decodeTokens, reps, seed, Transformer.DEFAULT_PREFILL_CHUNK);
    }

    public static Result run(Transformer model, int promptTokens, int decodeTokens, int reps, long seed, int prefillChunk) {
        if (promptTokens < 1 || decodeTokens < 1 || reps < 1) {
            throw new IllegalArgumentException("prompt, decode tokens and reps must be >= 1");
        }
        int vocab = model.config().vocabSize();
        int[] prompt = new SplittableRandom(seed).ints(promptTokens, 0, vocab).toArray();
        KvCache cache = model.newCache(promptTokens + decodeTokens + 1);
        double[] prefill = new double[reps];
        double[] decode = new double[reps];
        for (int rep = -1; rep < reps; rep++) {
            cache.clear();
            long t0 = System.nanoTime();
            float[] logits = model.prefill(prompt, cache, prefillChunk);
            long t1 = System.nanoTime();
            for (int i = 0; i < decodeTokens; i++) {
                int next = Greedy.argmax(logits, 0, vocab);
                logits = model.forward(new int[] {next}, cache, false);
            }
            long t2 = System.nanoTime();
            if (rep >= 0) {
                prefill[rep] = promptTokens * 1e9 / (t1 - t0);
                decode[rep] = decodeTokens * 1e9 / (t2 - t1);
            }
        }
        return new Result(promptTokens, decodeTokens, reps, Stats.of(prefill), Stats.of(decode));
    }
}
