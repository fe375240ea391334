package qlab.pipeline;

import qlab.pipeline.engine.EngineEvaluator;

/** Where the command line gets the evaluator that runs sweeps. */
public final class EvaluatorFactories {

    private EvaluatorFactories() {
    }

    /** The evaluator backed by qlab's engine, quantizers and measurements. */
    public static EvaluatorFactory engine() {
        return EngineEvaluator::new;
    }
}
