package qlab.engine.model;

import qlab.engine.tensor.Matrix;

/** Where a model's tensors come from: a Hugging Face checkpoint, or a quantized file. */
public interface WeightSource {

    /** The 2-D weight {@code name} as a matrix [rows, cols]. */
    Matrix matrix(String name, int rows, int cols);

    /** The 1-D tensor {@code name} (a norm weight or a bias) as f32. */
    float[] vector(String name, int length);

    /** A short description of where the weights are (a path). */
    String describe();
}
