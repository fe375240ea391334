package qlab.engine.model;

/**
 * What the measurements need from a model: its shape, a cache, and a batched forward pass that
 * returns logits for a suffix of the rows. {@link Transformer} is the real one; tests use models
 * with known closed-form outputs.
 */
public interface LanguageModel {

    ModelConfig config();

    KvCache newCache(int capacity);

    /**
     * Runs tokens as the continuation of cache (advancing it) and returns logits
     * [tokens.length - firstLogitRow, vocab] for rows firstLogitRow .. tokens.length-1.
     */
    float[] forward(int[] tokens, KvCache cache, int firstLogitRow);
}
