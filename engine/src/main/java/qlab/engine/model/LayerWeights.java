package qlab.engine.model;

import qlab.engine.tensor.Matrix;

/** One decoder layer's weights. Linear weights are [out, in]; q/k/v have biases, o_proj has none. */
public record LayerWeights(
        float[] attnNorm,   // [hidden]
        Matrix q,           // [heads*headDim, hidden]
        float[] qBias,      // [heads*headDim]
        Matrix k,           // [kvHeads*headDim, hidden]
        float[] kBias,      // [kvHeads*headDim]
        Matrix v,           // [kvHeads*headDim, hidden]
        float[] vBias,      // [kvHeads*headDim]
        Matrix o,           // [hidden, heads*headDim]
        float[] mlpNorm,    // [hidden]
        Matrix gate,        // [intermediate, hidden]
        Matrix up,          // [intermediate, hidden]
        Matrix down) {      // [hidden, intermediate]

    public long matrixBytes() {
        return q.byteSize() + k.byteSize() + v.byteSize() + o.byteSize()
                + gate.byteSize() + up.byteSize() + down.byteSize();
    }
}
