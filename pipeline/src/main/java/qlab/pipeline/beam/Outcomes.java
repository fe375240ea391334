package qlab.pipeline.beam;

import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.SerializableCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.metrics.Metrics;
import org.apache.beam.sdk.values.KV;
import qlab.pipeline.results.ConfigOutcome;
import qlab.pipeline.results.Journal;

/** Coders, counter names and the one way a config becomes finished inside the pipeline. */
final class Outcomes {

    static final String NAMESPACE = "qlab";
    static final String OK = "configs_ok";
    static final String SKIPPED = "configs_skipped";
    static final String FAILED = "configs_failed";
    static final String RESUMED = "configs_resumed";
    static final String MODELS = "models_prepared";
    static final String IMATRICES = "imatrices_ready";
    static final String CHECKPOINTS = "checkpoints_ready";
    static final String CHECKPOINTS_CACHED = "checkpoints_from_cache";
    static final String QUALITY = "quality_measured";
    static final String QUALITY_CACHED = "quality_from_cache";
    static final String THROUGHPUT = "throughput_measured";
    /** Suffix of the counters of groups (models, checkpoints, ...) whose stage failed: the stage is done with them. */
    static final String GROUP_FAILED_SUFFIX = "_groups_failed";
    /** Milliseconds spent inside evaluator calls, per stage: the sweep's useful work. */
    static final String WORK_MS_PREFIX = "work_ms_";

    /** Key under which configs that a grouping stage has nothing to do for travel through it. */
    static final String PASS = "\u0000pass";

    static final Coder<ConfigOutcome> CODER = SerializableCoder.of(ConfigOutcome.class);
    static final Coder<KV<String, ConfigOutcome>> KEYED = KvCoder.of(StringUtf8Coder.of(), CODER);

    private static final Counter OK_COUNT = Metrics.counter(NAMESPACE, OK);
    private static final Counter SKIPPED_COUNT = Metrics.counter(NAMESPACE, SKIPPED);
    private static final Counter FAILED_COUNT = Metrics.counter(NAMESPACE, FAILED);

    private Outcomes() {
    }

    /** Finishes a config: counts it and journals its row before it moves on. */
    static ConfigOutcome finish(ConfigOutcome o, ConfigOutcome.Status status, String reason, Journal journal) {
        ConfigOutcome done = o.finish(status, reason);
        if (status != ConfigOutcome.Status.SKIPPED) {
            // A skipped row costs nothing to make again: a killed run's successor adds it anew.
            journal.record(done);
        }
        switch (status) {
            case OK -> OK_COUNT.inc();
            case SKIPPED -> SKIPPED_COUNT.inc();
            case FAILED -> FAILED_COUNT.inc();
            case PENDING -> throw new IllegalArgumentException("finish as pending");
        }
        return done;
    }

    static void groupFailed(String stage) {
        Metrics.counter(NAMESPACE, stage + GROUP_FAILED_SUFFIX).inc();
    }

    static void work(String stage, long startNanos) {
        Metrics.counter(NAMESPACE, WORK_MS_PREFIX + stage).inc((System.nanoTime() - startNanos) / 1_000_000);
    }

    /**
     * The reason a failing config gets: what it was doing and the error, on one line. Only
     * exceptions and running out of memory are a config's own failure; other errors stop the sweep.
     */
    static String reason(String doing, Throwable t) {
        String message = t.getMessage() == null ? "" : ": " + t.getMessage().lines().findFirst().orElse("");
        return doing + ": " + t.getClass().getSimpleName() + message;
    }

    static boolean isConfigFailure(Throwable t) {
        return t instanceof Exception || t instanceof OutOfMemoryError || t instanceof StackOverflowError;
    }
}
