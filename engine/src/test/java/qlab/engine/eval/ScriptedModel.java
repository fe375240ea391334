package qlab.engine.eval;

import qlab.engine.model.KvCache;
import qlab.engine.model.LanguageModel;
import qlab.engine.model.ModelConfig;

/**
 * A language model whose logits are a known function of the window's tokens and positions, so
 * perplexity and KL have closed forms.
 */
final class ScriptedModel implements LanguageModel {

    /** logits[vocab] for row `pos` of a window whose tokens are `window`. */
    interface Rule {
        void logits(int[] window, int pos, float[] out);
    }

    private final ModelConfig config;
    private final Rule rule;

    ScriptedModel(int vocab, Rule rule) {
        this.config = new ModelConfig(8, 8, 1, 2, 1, 4, vocab, 1e-6, 10000, true, 4096, "float32");
        this.rule = rule;
    }

    @Override
    public ModelConfig config() {
        return config;
    }

    @Override
    public KvCache newCache(int capacity) {
        return new KvCache(config, capacity);
    }

    @Override
    public float[] forward(int[] tokens, KvCache cache, int firstLogitRow) {
        int v = config.vocabSize();
        float[] out = new float[(tokens.length - firstLogitRow) * v];
        float[] row = new float[v];
        for (int r = firstLogitRow; r < tokens.length; r++) {
            rule.logits(tokens, r, row);
            System.arraycopy(row, 0, out, (r - firstLogitRow) * v, v);
        }
        cache.advance(tokens.length);
        return out;
    }
}
