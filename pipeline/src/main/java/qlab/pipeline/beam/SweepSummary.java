package qlab.pipeline.beam;

import java.nio.file.Path;
import java.util.List;

/**
 * What a sweep run did.
 *
 * @param resultFile   the run's Parquet file, or null when there was nothing to run
 * @param recoveredRuns runs killed earlier whose journaled rows became their result files at start
 * @param wallMillis   wall time of the pipeline
 * @param workMillis   time spent inside evaluator calls summed over stages and workers (parallel
 *                     quality work can make it exceed the wall time)
 * @param failures     "config id (label): reason" of each config of this run that failed
 */
public record SweepSummary(String runId, Path out, Path resultFile, long ok, long skipped, long failed,
                           long resumed, List<String> recoveredRuns, long wallMillis, long workMillis,
                           Path report, List<String> failures) {

    /** At most this many failures are listed; the rest are counted. */
    public static final int FAILURES_LISTED = 20;

    public String describe() {
        StringBuilder sb = new StringBuilder();
        if (!recoveredRuns.isEmpty()) {
            sb.append("recovered the finished rows of interrupted run(s) ")
                    .append(String.join(", ", recoveredRuns)).append('\n');
        }
        if (resultFile == null) {
            sb.append("nothing to run: every config already has a row in ").append(out).append('\n');
        } else {
            sb.append(String.format("run %s: %d ok, %d skipped, %d failed, %d already done (resumed)%n",
                    runId, ok, skipped, failed, resumed));
            sb.append(String.format("wall %s, evaluator work %s (%.0f%% of wall)%n",
                    SweepProgress.clock(wallMillis), SweepProgress.clock(workMillis),
                    wallMillis == 0 ? 0.0 : 100.0 * workMillis / wallMillis));
            sb.append("results: ").append(resultFile).append('\n');
        }
        if (!failures.isEmpty()) {
            sb.append(failures.size()).append(failures.size() == 1 ? " config failed:\n" : " configs failed:\n");
            failures.stream().limit(FAILURES_LISTED).forEach(f -> sb.append("  ").append(f).append('\n'));
            if (failures.size() > FAILURES_LISTED) {
                sb.append("  ... and ").append(failures.size() - FAILURES_LISTED).append(" more (status_reason in ")
                        .append(resultFile).append(")\n");
            }
        }
        if (report != null) {
            sb.append("report:  ").append(report).append('\n');
        }
        return sb.toString();
    }
}
