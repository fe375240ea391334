package qlab.pipeline;

import java.nio.file.Path;
import qlab.pipeline.engine.EngineEvaluator;

/** Where the command line gets the evaluator that runs sweeps. */
public final class EvaluatorFactories {

    private EvaluatorFactories() {
    }

    /** The evaluator backed by qlab's engine, quantizers and measurements. */
    public static EvaluatorFactory engine() {
        return new Engine();
    }

    private static final class Engine implements EvaluatorFactory {
        @Override
        public Evaluator create(Path cacheDir) {
            return new EngineEvaluator(cacheDir);
        }

        @Override
        public void check(ModelSpec model) {
            EngineEvaluator.check(model);
        }
    }
}
