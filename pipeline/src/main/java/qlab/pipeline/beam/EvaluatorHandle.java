package qlab.pipeline.beam;

import java.io.Serializable;
import java.nio.file.Path;
import qlab.pipeline.Evaluator;
import qlab.pipeline.EvaluatorFactory;

/**
 * The evaluator of one DoFn instance: the factory is serialized with the DoFn, the evaluator is made
 * on the worker at {@code @Setup} and closed at {@code @Teardown}.
 */
final class EvaluatorHandle implements Serializable {

    private final EvaluatorFactory factory;
    private final String cacheDir;
    private transient Evaluator evaluator;

    EvaluatorHandle(EvaluatorFactory factory, String cacheDir) {
        this.factory = factory;
        this.cacheDir = cacheDir;
    }

    void open() throws Exception {
        evaluator = factory.create(Path.of(cacheDir));
    }

    Evaluator get() {
        return evaluator;
    }

    Path cacheDir() {
        return Path.of(cacheDir);
    }

    void release() {
        if (evaluator != null) {
            evaluator.release();
        }
    }

    void close() throws Exception {
        if (evaluator != null) {
            evaluator.close();
            evaluator = null;
        }
    }
}
