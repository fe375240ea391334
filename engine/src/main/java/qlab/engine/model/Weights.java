package qlab.engine.model;

import java.util.LinkedHashMap;
import java.util.Map;
import qlab.engine.tensor.Matrix;

/** All weights of a model. When embeddings are tied, {@code lmHead == embed}. */
public record Weights(Matrix embed, LayerWeights[] layers, float[] finalNorm, Matrix lmHead) {

    public static Weights load(ModelConfig c, WeightSource src) {
        int h = c.hiddenSize();
        LayerWeights[] layers = new LayerWeights[c.numLayers()];
        for (int i = 0; i < layers.length; i++) {
            layers[i] = LayerWeights.load(c, i, src);
        }
        Matrix embed = src.matrix(ModelManifest.EMBED, c.vocabSize(), h);
        Matrix head = c.tieWordEmbeddings() ? embed : src.matrix(ModelManifest.LM_HEAD, c.vocabSize(), h);
        return new Weights(embed, layers, src.vector(ModelManifest.FINAL_NORM, h), head);
    }

    /** Every weight matrix by its Hugging Face name; a tied head is the embedding, listed once. */
    public Map<String, Matrix> matrices() {
        Map<String, Matrix> m = new LinkedHashMap<>();
        m.put(ModelManifest.EMBED, embed);
        for (int i = 0; i < layers.length; i++) {
            layers[i].putMatrices(i, m);
        }
        if (lmHead != embed) {
            m.put(ModelManifest.LM_HEAD, lmHead);
        }
        return m;
    }

    /** Every norm weight and bias by its Hugging Face name. */
    public Map<String, float[]> vectors() {
        Map<String, float[]> m = new LinkedHashMap<>();
        for (int i = 0; i < layers.length; i++) {
            layers[i].putVectors(i, m);
        }
        m.put(ModelManifest.FINAL_NORM, finalNorm);
        return m;
    }

    /**
     * Bytes one decode step reads: every layer matrix and the LM head (the embedding lookup reads
     * one row, negligible; a tied head is counted once).
     */
    public long decodeBytes() {
        long total = lmHead.byteSize();
        for (LayerWeights l : layers) {
            total += l.matrixBytes();
        }
        return total;
    }

    /** Bytes of all matrices in memory (embedding and head once each, or once if tied). */
    public long matrixBytes() {
        return decodeBytes() + (lmHead == embed ? 0 : embed.byteSize());
    }
}
