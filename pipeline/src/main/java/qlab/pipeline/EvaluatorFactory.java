package qlab.pipeline;

import java.io.Serializable;
import java.nio.file.Path;

/**
 * Makes an {@link Evaluator} on each worker. The factory travels with the pipeline's functions (it is
 * serialized to the workers of a distributed runner), the evaluator it makes does not.
 */
@FunctionalInterface
public interface EvaluatorFactory extends Serializable {

    /** @param cacheDir a directory the evaluator may keep its own files in (prepared models, references) */
    Evaluator create(Path cacheDir) throws Exception;

    /**
     * Checks the sweep's model once, before any work starts, so that a bad file fails the sweep
     * with one line rather than every config after its quantization. Nothing by default.
     */
    default void check(ModelSpec model) {
    }
}
