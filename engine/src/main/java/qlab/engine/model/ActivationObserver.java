package qlab.engine.model;

/**
 * Sees the input of every group of weight matrices during a forward pass; importance-matrix
 * calibration records per-channel statistics through it. Called on the forward's own thread.
 */
public interface ActivationObserver {

    /** Which matrices read the observed activations. */
    enum Site {
        /** input of q_proj, k_proj and v_proj (one shared input) */
        ATTN_INPUT,
        /** input of o_proj: the concatenated attention heads */
        ATTN_OUTPUT,
        /** input of gate_proj and up_proj (one shared input) */
        MLP_INPUT,
        /** input of down_proj: silu(gate) * up */
        MLP_HIDDEN,
        /** input of the LM head: the final-normed hidden state (layer is -1) */
        HEAD_INPUT
    }

    /** x holds rows x cols activations, row-major; only read it during the call. */
    void observe(int layer, Site site, float[] x, int rows, int cols);
}
