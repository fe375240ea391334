package qlab.cli;

import picocli.CommandLine.Option;
import qlab.engine.QlabException;
import qlab.engine.util.WorkerPool;
import qlab.quant.QuantizedMatrix;

/** The options shared by every command that runs the model: --threads and --activations. */
final class EngineOptions {

    /** How integer-format products take their activations. */
    enum Activations { f32, int8 }

    private Activations activations = Activations.f32;

    /**
     * Set while the command line is parsed, so before any model is opened: every quantized matrix
     * reads the choice when it is built ({@link QuantizedMatrix#ACTIVATIONS_PROPERTY}).
     */
    @Option(names = "--activations", paramLabel = "A", defaultValue = "f32",
            description = "Activations of integer-format products: f32 (default) or int8 (quantized per block once per "
                    + "product: decode in 16-bit integer lanes, faster for 4-bit and smaller formats, for q8_0 on some "
                    + "CPUs; prompts on the rounded codes; slightly different results).")
    void activations(Activations a) {
        activations = a;
        System.setProperty(QuantizedMatrix.ACTIVATIONS_PROPERTY, a.name());
    }

    String activations() {
        return activations.name();
    }

    @Option(names = "--threads", paramLabel = "T", description = "Worker threads (default: all cores).")
    Integer threads;

    int count() {
        int t = threads == null ? Runtime.getRuntime().availableProcessors() : threads;
        if (t < 1) {
            throw new QlabException("--threads must be at least 1, got " + t);
        }
        return t;
    }

    WorkerPool pool() {
        return new WorkerPool(count());
    }
}
