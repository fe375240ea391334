package qlab.cli;

import picocli.CommandLine.Option;
import qlab.engine.QlabException;
import qlab.engine.model.KvTypes;
import qlab.engine.util.WorkerPool;
import qlab.quant.KvFormats;
import qlab.quant.QuantizedMatrix;

/** The options shared by every command that runs the model: --threads, --activations and the KV cache types. */
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

    @Option(names = {"--cache-type-k", "-ctk"}, paramLabel = "TYPE", defaultValue = "f32",
            description = "KV cache type of the keys (llama.cpp's -ctk): f32 (default), f16, bf16, q8_0, q4_0, q4_1, "
                    + "q5_0, q5_1, iq4_nl.")
    String cacheTypeK;

    @Option(names = {"--cache-type-v", "-ctv"}, paramLabel = "TYPE", defaultValue = "f32",
            description = "KV cache type of the values (llama.cpp's -ctv): the same types as --cache-type-k.")
    String cacheTypeV;

    /** The KV cache's storage types; an unknown name is a one-line error. */
    KvTypes kvTypes() {
        return KvFormats.of(cacheTypeK, cacheTypeV);
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
