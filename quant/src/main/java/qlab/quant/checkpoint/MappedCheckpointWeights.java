package qlab.quant.checkpoint;

import java.nio.file.Path;
import qlab.engine.QlabException;
import qlab.engine.model.CheckpointWeights;
import qlab.engine.model.Model;
import qlab.engine.model.WeightSource;
import qlab.engine.safetensors.Checkpoint;
import qlab.engine.safetensors.TensorInfo;
import qlab.engine.tensor.Matrix;
import qlab.quant.Formats;
import qlab.quant.QuantizedMatrix;

/**
 * A Hugging Face checkpoint's matrices read in place from the file's mapping, each row widened to
 * f32 as a product reads it (the f32, f16 or bf16 format's kernels), instead of copied onto the heap
 * widened: a bf16 0.5B model is 1 GB of mapped file rather than 2 GB of heap that the collector
 * then has to size its heap around. The values are the ones {@link CheckpointWeights} makes, exactly.
 * Norm weights and biases (small) are widened onto the heap as there.
 */
public final class MappedCheckpointWeights implements WeightSource {

    private final CheckpointWeights checked;

    public MappedCheckpointWeights(Checkpoint checkpoint) {
        this.checked = new CheckpointWeights(checkpoint);
    }

    /** A model directory with its matrices in place ({@link Model#load(Path)} widens them onto the heap). */
    public static Model load(Path dir) {
        return Model.load(dir, MappedCheckpointWeights::new);
    }

    @Override
    public Matrix matrix(String name, int rows, int cols) {
        checked.check(name, new long[] {rows, cols});
        Checkpoint c = checked.checkpoint();
        TensorInfo t = c.info(name);
        String format = switch (t.dtype()) {
            case F32 -> "f32";
            case F16 -> "f16";
            case BF16 -> "bf16";
            default -> throw new QlabException(c.file(name).path() + ": tensor \"" + name + "\": field \"dtype\" is "
                    + t.dtype() + ", expected F32, F16 or BF16");
        };
        return new QuantizedMatrix(Formats.byName(format), c.bytes(name), rows, cols, false);
    }

    @Override
    public float[] vector(String name, int length) {
        return checked.vector(name, length);
    }

    @Override
    public String describe() {
        return checked.describe() + " (matrices mapped)";
    }
}
