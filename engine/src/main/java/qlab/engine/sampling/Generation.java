package qlab.engine.sampling;

import java.util.Arrays;
import java.util.function.IntConsumer;
import java.util.function.IntPredicate;
import qlab.engine.QlabException;
import qlab.engine.model.KvCache;
import qlab.engine.model.LanguageModel;

/**
 * The decode loop: prefill a prompt as the continuation of a cache, then draw one token at a time
 * until a stop token or the token budget. A stop token is reported but not fed to the model, so
 * the cache ends with the last real token.
 */
public final class Generation {

    /** The tokens drawn (a final stop token included), and whether a stop token ended it. */
    public record Result(int[] ids, boolean stopped, double prefillSeconds, double decodeSeconds) {
        /** Tokens per second of the decode phase (tokens after the first), NaN if fewer than two. */
        public double decodeTps() {
            return ids.length > 1 ? (ids.length - 1) / decodeSeconds : Double.NaN;
        }
    }

    private Generation() {}

    /**
     * @param history  tokens already in the cache (they count for the repetition penalty, as the
     *                 whole input sequence does in transformers)
     * @param feedLast whether a last token that is not a stop token is fed too, so the cache holds
     *                 every token drawn (a chat continues from it; a one-off generation need not)
     */
    public static Result run(LanguageModel model, KvCache cache, int[] history, int[] prompt, Sampler sampler,
            int maxTokens, IntPredicate isStop, IntConsumer onToken, boolean feedLast) {
        if (prompt.length == 0) {
            throw new QlabException("the prompt is empty");
        }
        if (cache.length() + prompt.length + maxTokens > cache.capacity()) {
            throw new QlabException("context full: " + cache.length() + " cached + " + prompt.length + " prompt + "
                    + maxTokens + " new tokens exceed the context of " + cache.capacity());
        }
        int vocab = model.config().vocabSize();
        int[] context = Arrays.copyOf(history, history.length + prompt.length + maxTokens);
        System.arraycopy(prompt, 0, context, history.length, prompt.length);
        int length = history.length + prompt.length;
        long t0 = System.nanoTime();
        float[] logits = model.forward(prompt, cache, prompt.length - 1);
        long t1 = System.nanoTime();
        int[] out = new int[maxTokens];
        int n = 0;
        boolean stopped = false;
        while (n < maxTokens) {
            int next = sampler.sample(logits.length == vocab ? logits : Arrays.copyOf(logits, vocab), context, length);
            out[n++] = next;
            onToken.accept(next);
            if (isStop.test(next)) {
                stopped = true;
                break;
            }
            context[length++] = next;
            if (n < maxTokens || feedLast) {
                logits = model.forward(new int[] {next}, cache, 0);
            }
        }
        long t2 = System.nanoTime();
        return new Result(Arrays.copyOf(out, n), stopped, (t1 - t0) / 1e9, (t2 - t1) / 1e9);
    }
}
