package qlab.pipeline.beam;

import java.io.PrintStream;
import java.time.Duration;
import java.util.Map;

/**
 * The live progress line: configs finished of the total, the stage now running with its own count,
 * elapsed time and an ETA, on stderr, so stdout stays clean for machine-readable output. On a
 * terminal the line is rewritten in place ({@code \r}); into a file or a pipe (a log, CI) it is
 * written as whole lines, one whenever the configs finished or the stage change and at least
 * {@link #LOG_EVERY_MILLIS} apart, so a log reads as a trace instead of hundreds of overwrites.
 */
final class SweepProgress {

    /** Least time between two lines written to a log. */
    static final long LOG_EVERY_MILLIS = 10_000;

    private final SweepPlan plan;
    private final PrintStream out;
    private final boolean inPlace;
    private final long startNanos = System.nanoTime();
    private int lastWidth;
    private String lastLogged = "";
    private long lastLoggedAt = Long.MIN_VALUE / 2;

    /** Rewrites the line in place when {@code out} is the stderr of an interactive terminal. */
    SweepProgress(SweepPlan plan, PrintStream out) {
        this(plan, out, out == System.err && System.console() != null && System.console().isTerminal());
    }

    SweepProgress(SweepPlan plan, PrintStream out, boolean inPlace) {
        this.plan = plan;
        this.out = out;
        this.inPlace = inPlace;
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
        if (!inPlace) {
            // what changed: the configs finished and the stage, not the clock
            String state = line.substring(0, line.indexOf(" elapsed"));
            state = state.substring(0, state.lastIndexOf(" | "));
            if (!state.equals(lastLogged) && now - lastLoggedAt >= LOG_EVERY_MILLIS) {
                out.println(line);
                out.flush();
                lastLogged = state;
                lastLoggedAt = now;
            }
            return;
        }
        int pad = Math.max(0, lastWidth - line.length());
        out.print("\r" + line + " ".repeat(pad));
        out.flush();
        lastWidth = line.length();
    }

    void end() {
        if (lastWidth > 0) {
            out.println();
        }
    }

    String line(Map<String, Long> c, long finishedNow, long elapsedMs) {
        long committed = get(c, Outcomes.OK) + get(c, Outcomes.FAILED);
        long skipped = get(c, Outcomes.SKIPPED);
        long finished = Math.min(skipped + Math.max(committed, finishedNow), plan.configs());
        String[] names = {"prepare", "imatrix", "quantize", "quality", "throughput"};
        String[] counters = {Outcomes.MODELS, Outcomes.IMATRICES, Outcomes.CHECKPOINTS, Outcomes.QUALITY,
                Outcomes.THROUGHPUT};
        long[] expected = {plan.models(), plan.imatrices(), plan.checkpoints(), plan.qualities(), plan.throughputs()};
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
        long units = 0;
        long doneUnits = 0;
        for (int i = 0; i < names.length; i++) {
            units += expected[i];
            doneUnits += done[i];
        }
        String eta = doneUnits == 0 || units == 0 ? "--:--"
                : clock(elapsedMs * (units - doneUnits) / doneUnits);
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
        Duration d = Duration.ofMillis(Math.max(0, millis));
        long h = d.toHours();
        return h > 0 ? String.format("%d:%02d:%02d", h, d.toMinutesPart(), d.toSecondsPart())
                : String.format("%02d:%02d", d.toMinutesPart(), d.toSecondsPart());
    }

    private static long get(Map<String, Long> c, String name) {
        return c.getOrDefault(name, 0L);
    }
}
