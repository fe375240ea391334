package qlab.engine.model;

import java.util.Arrays;
import qlab.engine.QlabException;
import qlab.engine.safetensors.Checkpoint;
import qlab.engine.safetensors.TensorInfo;
import qlab.engine.tensor.F32Matrix;
import qlab.engine.tensor.Matrix;

/** Weights of a Hugging Face safetensors checkpoint (F32, F16 or BF16), widened exactly to f32. */
public final class CheckpointWeights implements WeightSource {

    private final Checkpoint checkpoint;

    public CheckpointWeights(Checkpoint checkpoint) {
        this.checkpoint = checkpoint;
    }

    public Checkpoint checkpoint() {
        return checkpoint;
    }

    @Override
    public Matrix matrix(String name, int rows, int cols) {
        check(name, new long[] {rows, cols});
        return new F32Matrix(checkpoint.floats(name), rows, cols);
    }

    @Override
    public float[] vector(String name, int length) {
        check(name, new long[] {length});
        return checkpoint.floats(name);
    }

    /** Fails, naming the file and field, unless tensor {@code name} has this shape and a float dtype. */
    public void check(String name, long[] shape) {
        TensorInfo t = checkpoint.info(name);
        if (!Arrays.equals(t.shape(), shape)) {
            throw new QlabException(checkpoint.file(name).path() + ": tensor \"" + name + "\": field \"shape\" is "
                    + Arrays.toString(t.shape()) + ", expected " + Arrays.toString(shape));
        }
        if (!t.dtype().isWidenableFloat()) {
            throw new QlabException(checkpoint.file(name).path() + ": tensor \"" + name + "\": field \"dtype\" is "
                    + t.dtype() + ", expected F32, F16 or BF16");
        }
    }

    @Override
    public String describe() {
        return checkpoint.source().toString();
    }
}
