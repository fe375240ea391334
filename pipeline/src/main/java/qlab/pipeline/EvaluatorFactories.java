package qlab.pipeline;

import qlab.engine.QlabException;

/**
 * Where the command line gets the evaluator that runs sweeps on the real engine. The engine, the
 * quantizers and the measurements are not wired into the pipeline yet, so there is none to give:
 * asking for it fails with a clear message instead of producing made-up numbers.
 */
public final class EvaluatorFactories {

    private EvaluatorFactories() {
    }

    /** The evaluator backed by qlab's engine and quantizers. */
    public static EvaluatorFactory engine() {
        throw new QlabException("sweep: the engine evaluator is not available in this build yet "
                + "(the pipeline is ready; the engine, quantizers and measurements are not wired into it), "
                + "so nothing was run");
    }
}
