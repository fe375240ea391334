package qlab.engine.model;

/** Greedy decoding: the argmax of the last position, lowest index on an exact tie. */
public final class Greedy {

    private Greedy() {}

    public static int argmax(float[] logits, int offset, int n) {
        int best = 0;
        float bestValue = logits[offset];
        for (int i = 1; i < n; i++) {
            if (logits[offset + i] > bestValue) {
                bestValue = logits[offset + i];
                best = i;
            }
        }
        return best;
    }

    /**
     * Continues a sequence whose prompt is already in {@code cache}: {@code logits} holds the
     * prompt's logits (its last {@code vocab} values are the last position's). Returns the
     * {@code count} greedy tokens, decoding one token at a time through the cache.
     */
    public static int[] continueGreedy(Transformer model, KvCache cache, float[] logits, int vocab, int count) {
        int[] out = new int[count];
        float[] last = logits;
        int lastOffset = logits.length - vocab;
        for (int i = 0; i < count; i++) {
            out[i] = argmax(last, lastOffset, vocab);
            if (i + 1 < count) {
                last = model.forward(new int[] {out[i]}, cache, false);
                lastOffset = 0;
            }
        }
        return out;
    }
}
