package qlab.pipeline.results;

import qlab.engine.bench.MachineInfo;
import java.io.Serializable;
import qlab.pipeline.PreparedModel;
import qlab.pipeline.QualityMeasurement;
import qlab.pipeline.QuantizedCheckpoint;
import qlab.pipeline.ThroughputMeasurement;
import qlab.pipeline.matrix.SweepConfig;

/**
 * A config on its way through the sweep: what has been computed for it so far and whether it is
 * finished. Immutable; each stage returns a new one (Beam forbids changing an element in place).
 *
 * @param importancePath the importance matrix file, once computed (null for configs without one)
 * @param checkpointKey  content key of the quantized checkpoint in the cache
 * @param machine        the machine of the last measurement; null until one ran
 * @param finishedAt     epoch millis when the config became ok, skipped or failed; 0 while pending
 */
public record ConfigOutcome(SweepConfig config, Status status, String reason, PreparedModel model,
                            String importancePath, String checkpointKey, QuantizedCheckpoint checkpoint,
                            QualityMeasurement quality, ThroughputMeasurement throughput,
                            Double loadBefore, Double loadAfter, MachineInfo machine, long finishedAt,
                            Boolean paretoBpwKl, Boolean paretoBpwPpl, Boolean paretoTpsKl) implements Serializable {

    public enum Status {
        PENDING, OK, SKIPPED, FAILED;

        public String column() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /** The outcome a config starts with: pending, nothing computed. */
    public static ConfigOutcome start(SweepConfig config) {
        return new ConfigOutcome(config, Status.PENDING, null, null, null, null, null, null, null,
                null, null, null, 0L, null, null, null);
    }

    public boolean pending() {
        return status == Status.PENDING;
    }

    public ConfigOutcome withModel(PreparedModel m) {
        return new ConfigOutcome(config, status, reason, m, importancePath, checkpointKey, checkpoint, quality,
                throughput, loadBefore, loadAfter, machine, finishedAt, paretoBpwKl, paretoBpwPpl, paretoTpsKl);
    }

    public ConfigOutcome withImportance(String path) {
        return new ConfigOutcome(config, status, reason, model, path, checkpointKey, checkpoint, quality,
                throughput, loadBefore, loadAfter, machine, finishedAt, paretoBpwKl, paretoBpwPpl, paretoTpsKl);
    }

    public ConfigOutcome withCheckpoint(String key, QuantizedCheckpoint c) {
        return new ConfigOutcome(config, status, reason, model, importancePath, key, c, quality,
                throughput, loadBefore, loadAfter, machine, finishedAt, paretoBpwKl, paretoBpwPpl, paretoTpsKl);
    }

    public ConfigOutcome withQuality(QualityMeasurement q, MachineInfo on) {
        return new ConfigOutcome(config, status, reason, model, importancePath, checkpointKey, checkpoint, q,
                throughput, loadBefore, loadAfter, on, finishedAt, paretoBpwKl, paretoBpwPpl, paretoTpsKl);
    }

    public ConfigOutcome withThroughput(ThroughputMeasurement t, Double before, Double after, MachineInfo on) {
        return new ConfigOutcome(config, status, reason, model, importancePath, checkpointKey, checkpoint, quality,
                t, before, after, on, finishedAt, paretoBpwKl, paretoBpwPpl, paretoTpsKl);
    }

    public ConfigOutcome withPareto(Boolean bpwKl, Boolean bpwPpl, Boolean tpsKl) {
        return new ConfigOutcome(config, status, reason, model, importancePath, checkpointKey, checkpoint, quality,
                throughput, loadBefore, loadAfter, machine, finishedAt, bpwKl, bpwPpl, tpsKl);
    }

    /** Marks the config finished now; the row keeps whatever was measured before a failure. */
    public ConfigOutcome finish(Status s, String why) {
        return new ConfigOutcome(config, s, why, model, importancePath, checkpointKey, checkpoint, quality,
                throughput, loadBefore, loadAfter, machine, System.currentTimeMillis(),
                paretoBpwKl, paretoBpwPpl, paretoTpsKl);
    }

    /** The key under which a finished {@code ok} row makes this config count as done on resume. */
    public static String resumeKey(String configId, String modelHash) {
        return configId + "|" + modelHash;
    }
}
