package qlab.cli;

import picocli.CommandLine.Option;
import qlab.engine.QlabException;
import qlab.engine.util.WorkerPool;

/** The --threads option shared by every command that runs the model. */
final class ThreadsOption {

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
