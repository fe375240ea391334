package qlab.pipeline.beam;

import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import qlab.engine.util.StatusLine;

/**
 * The live progress line: configs finished of the total, the stage now running with its own count,
 * elapsed time and an ETA, on stderr ({@link StatusLine}: in place on a terminal, whole lines into a
 * log). The ETA weighs every stage's remaining units by their work ({@link SweepPlan#unitCosts}),
 * so it counts the stages still to come (throughput, typically the longest) from the start.
 */
final class SweepProgress {

    private final SweepPlan plan;
    private final StatusLine status;
    private final long startNanos = System.nanoTime();

    /** Rewrites the line in place when {@code out} is the stderr of an interactive terminal. */
    SweepProgress(SweepPlan plan, PrintStream out) {
        this(plan, out, out == System.err && StatusLine.stderrIsTerminal());
    }

    SweepProgress(SweepPlan plan, PrintStream out, boolean inPlace) {
        this.plan = plan;
        this.status = new StatusLine(new PrintWriter(out, false, StandardCharsets.UTF_8), inPlace);
    }

    long elapsedMillis() {
        return (System.nanoTime() - startNanos) / 1_000_000;
    }

    /**
     * Redraws the line.
     *
     * @param counters  the pipeline's counters as far as committed
     * @param finishedNow configs finished ok or failed so far as the journal shows them (ahead of the
     *                    counters; skipped rows are not journaled)
     */
    void update(Map<String, Long> counters, long finishedNow) {
        long now = elapsedMillis();
        String line = line(counters, finishedNow, now);
        // what changed: the configs finished and the stage, not the clock
        String state = line.substring(0, line.indexOf(" elapsed"));
        state = state.substring(0, state.lastIndexOf(" | "));
        status.show(line, state, now, false);
    }

    void end() {
        status.end();
    }
    String line(Map<String, Long> c, long finishedNow, long elapsedMs) {
        long committed = get(c, Outcomes.OK) + get(c, Outcomes.FAILED);
        long skipped = get(c, Outcomes.SKIPPED);
        long finished = Math.min(skipped + Math.max(committed, finishedNow), plan.configs());
        String[] names = {"prepare", "imatrix", "quantize", "quality", "throughput"};
        String[] counters = {Outcomes.MODELS, Outcomes.IMATRICES, Outcomes.CHECKPOINTS, Outcomes.QUALITY,
                Outcomes.THROUGHPUT};
        long[] expected = plan.expected();
        long[] done = new long[names.length];
        for (int i = 0; i < names.length; i++) {
            // A failed group is finished business for its stage.
            done[i] = Math.min(expected[i], get(c, counters[i]) + get(c, names[i] + Outcomes.GROUP_FAILED_SUFFIX));
        }
        // Throughput runs as one long bundle whose counter commits only at its end; meanwhile each
        // config it finishes (ok or failed) is in the journal at once, ahead of the committed counters.
        // (All configs of a sweep share their measurements, so when throughput is measured no config
        // finishes at the quality stage except by failing.)
        boolean qualityOver = plan.qualities() == 0 || done[3] > 0;
        if (done[4] == 0 && expected[4] > 0 && qualityOver) {
            done[4] = Math.min(expected[4], Math.max(0, finishedNow - committed));
        }
        String stage = "write";
        if (finished < plan.configs() && c.isEmpty()) {
            stage = "running";  // a runner that reports no metrics until it is done
        } else if (finished < plan.configs()) {
            for (int i = 0; i < names.length; i++) {
                // Failures upstream can leave a stage below its expected count for good: it is over
                // once a later stage has begun.
                if (done[i] < expected[i] && !laterStarted(done, i)) {
                    stage = names[i] + " " + done[i] + "/" + expected[i];
                    break;
                }
            }
        }
        // Work, not counts: a quantized checkpoint is a fraction of a throughput run's work.
        double work = 0;
        double doneWork = 0;
        for (int i = 0; i < names.length; i++) {
            work += expected[i] * plan.unitCosts()[i];
            doneWork += done[i] * plan.unitCosts()[i];
        }
        String eta = doneWork == 0 || work == 0 ? "--:--"
                : clock(Math.round(elapsedMs * (work - doneWork) / doneWork));
        return String.format("sweep %d/%d configs | %s | %s elapsed | ETA %s",
                finished, plan.configs(), stage, clock(elapsedMs), eta);
    }

    private static boolean laterStarted(long[] done, int stage) {
        for (int j = stage + 1; j < done.length; j++) {
            if (done[j] > 0) {
                return true;
            }
        }
        return false;
    }

    static String clock(long millis) {
        return StatusLine.clock(millis);
    }

    private static long get(Map<String, Long> c, String name) {
        return c.getOrDefault(name, 0L);
    }
}
