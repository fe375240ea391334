package qlab.engine.model;

import static qlab.engine.model.ModelManifest.layer;

import qlab.engine.tensor.Matrix;

/** All weights of a Qwen2 model. When embeddings are tied, {@code lmHead == embed}. */
public record Weights(Matrix embed, LayerWeights[] layers, float[] finalNorm, Matrix lmHead) {

    public static Weights load(ModelConfig c, WeightSource src) {
        int h = c.hiddenSize();
        LayerWeights[] layers = new LayerWeights[c.numLayers()];
        for (int i = 0; i < layers.length; i++) {
            layers[i] = new LayerWeights(
                    src.vector(layer(i, "input_layernorm.weight"), h),
                    src.matrix(layer(i, "self_attn.q_proj.weight"), c.qDim(), h),
                    src.vector(layer(i, "self_attn.q_proj.bias"), c.qDim()),
                    src.matrix(layer(i, "self_attn.k_proj.weight"), c.kvDim(), h),
                    src.vector(layer(i, "self_attn.k_proj.bias"), c.kvDim()),
                    src.matrix(layer(i, "self_attn.v_proj.weight"), c.kvDim(), h),
                    src.vector(layer(i, "self_attn.v_proj.bias"), c.kvDim()),
                    src.matrix(layer(i, "self_attn.o_proj.weight"), h, c.qDim()),
                    src.vector(layer(i, "post_attention_layernorm.weight"), h),
                    src.matrix(layer(i, "mlp.gate_proj.weight"), c.intermediateSize(), h),
                    src.matrix(layer(i, "mlp.up_proj.weight"), c.intermediateSize(), h),
                    src.matrix(layer(i, "mlp.down_proj.weight"), h, c.intermediateSize()));
        }
        Matrix embed = src.matrix(ModelManifest.EMBED, c.vocabSize(), h);
        Matrix head = c.tieWordEmbeddings() ? embed : src.matrix(ModelManifest.LM_HEAD, c.vocabSize(), h);
        return new Weights(embed, layers, src.vector(ModelManifest.FINAL_NORM, h), head);
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
