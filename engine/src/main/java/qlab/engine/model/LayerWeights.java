package qlab.engine.model;

import static qlab.engine.model.ModelManifest.layer;

import java.util.Map;
import qlab.engine.tensor.Matrix;

/**
 * One decoder layer's weights. Linear weights are [out, in]. Which biases and norms exist is the
 * config's data ({@link ModelConfig#qkvBias()}, {@code oBias}, {@code mlpBias}, {@code qkNorm}); an
 * absent one is null.
 */
public record LayerWeights(
        float[] attnNorm,   // [hidden]
        Matrix q,           // [heads*headDim, hidden]
        float[] qBias,      // [heads*headDim] or null
        Matrix k,           // [kvHeads*headDim, hidden]
        float[] kBias,      // [kvHeads*headDim] or null
        Matrix v,           // [kvHeads*headDim, hidden]
        float[] vBias,      // [kvHeads*headDim] or null
        float[] qNorm,      // [headDim] or null: per-head RMSNorm of q before RoPE
        float[] kNorm,      // [headDim] or null: per-head RMSNorm of k before RoPE
        Matrix o,           // [hidden, heads*headDim]
        float[] oBias,      // [hidden] or null
        float[] mlpNorm,    // [hidden]
        Matrix gate,        // [intermediate, hidden]
        float[] gateBias,   // [intermediate] or null
        Matrix up,          // [intermediate, hidden]
        float[] upBias,     // [intermediate] or null
        Matrix down,        // [hidden, intermediate]
        float[] downBias) { // [hidden] or null

    /** Layer {@code i} of a model shaped as {@code c}, read from {@code src} by its Hugging Face names. */
    public static LayerWeights load(ModelConfig c, int i, WeightSource src) {
        int h = c.hiddenSize();
        int inter = c.intermediateSize();
        return new LayerWeights(
                src.vector(layer(i, "input_layernorm.weight"), h),
                src.matrix(layer(i, "self_attn.q_proj.weight"), c.qDim(), h),
                c.qkvBias() ? src.vector(layer(i, "self_attn.q_proj.bias"), c.qDim()) : null,
                src.matrix(layer(i, "self_attn.k_proj.weight"), c.kvDim(), h),
                c.qkvBias() ? src.vector(layer(i, "self_attn.k_proj.bias"), c.kvDim()) : null,
                src.matrix(layer(i, "self_attn.v_proj.weight"), c.kvDim(), h),
                c.qkvBias() ? src.vector(layer(i, "self_attn.v_proj.bias"), c.kvDim()) : null,
                c.qkNorm() ? src.vector(layer(i, "self_attn.q_norm.weight"), c.headDim()) : null,
                c.qkNorm() ? src.vector(layer(i, "self_attn.k_norm.weight"), c.headDim()) : null,
                src.matrix(layer(i, "self_attn.o_proj.weight"), h, c.qDim()),
                c.oBias() ? src.vector(layer(i, "self_attn.o_proj.bias"), h) : null,
                src.vector(layer(i, "post_attention_layernorm.weight"), h),
                src.matrix(layer(i, "mlp.gate_proj.weight"), inter, h),
                c.mlpBias() ? src.vector(layer(i, "mlp.gate_proj.bias"), inter) : null,
                src.matrix(layer(i, "mlp.up_proj.weight"), inter, h),
                c.mlpBias() ? src.vector(layer(i, "mlp.up_proj.bias"), inter) : null,
                src.matrix(layer(i, "mlp.down_proj.weight"), h, inter),
                c.mlpBias() ? src.vector(layer(i, "mlp.down_proj.bias"), h) : null);
    }

    /** The weight matrices of layer {@code i}, by Hugging Face name. */
    void putMatrices(int i, Map<String, Matrix> out) {
        out.put(layer(i, "self_attn.q_proj.weight"), q);
        out.put(layer(i, "self_attn.k_proj.weight"), k);
        out.put(layer(i, "self_attn.v_proj.weight"), v);
        out.put(layer(i, "self_attn.o_proj.weight"), o);
        out.put(layer(i, "mlp.gate_proj.weight"), gate);
        out.put(layer(i, "mlp.up_proj.weight"), up);
        out.put(layer(i, "mlp.down_proj.weight"), down);
    }

    /** The norms and biases of layer {@code i} that exist, by Hugging Face name. */
    void putVectors(int i, Map<String, float[]> out) {
        out.put(layer(i, "input_layernorm.weight"), attnNorm);
        putIfPresent(out, layer(i, "self_attn.q_proj.bias"), qBias);
        putIfPresent(out, layer(i, "self_attn.k_proj.bias"), kBias);
        putIfPresent(out, layer(i, "self_attn.v_proj.bias"), vBias);
        putIfPresent(out, layer(i, "self_attn.q_norm.weight"), qNorm);
        putIfPresent(out, layer(i, "self_attn.k_norm.weight"), kNorm);
        putIfPresent(out, layer(i, "self_attn.o_proj.bias"), oBias);
        out.put(layer(i, "post_attention_layernorm.weight"), mlpNorm);
        putIfPresent(out, layer(i, "mlp.gate_proj.bias"), gateBias);
        putIfPresent(out, layer(i, "mlp.up_proj.bias"), upBias);
        putIfPresent(out, layer(i, "mlp.down_proj.bias"), downBias);
    }

    private static void putIfPresent(Map<String, float[]> out, String name, float[] v) {
        if (v != null) {
            out.put(name, v);
        }
    }

    public long matrixBytes() {
        return q.byteSize() + k.byteSize() + v.byteSize() + o.byteSize()
                + gate.byteSize() + up.byteSize() + down.byteSize();
    }
}
