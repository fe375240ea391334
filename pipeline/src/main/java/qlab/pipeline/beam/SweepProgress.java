package qlab.pipeline.beam;

import java.io.PrintStream;
import java.time.Duration;
import java.util.Map;

/**
 * The live progress line: configs finished of the total, the stage now running with its own count,
 * elapsed time and an ETA. The line is rewritten in place ({@code \r}) on stderr, so stdout stays
 * clean for machine-readable output.
 */
final class SweepProgress {

    private final SweepPlan plan;
    private final PrintStream out;
    private final long startNanos = System.nanoTime();
    private int lastWidth;

    SweepProgress(SweepPlan plan, PrintStream out) {
        this.plan = plan;
        this.out = out;
    }

    long elapsedMillis() {
        return (System.nanoTime() - startNanos) / 1_000_000;
    }

    /** Redraws the line from the pipeline's counters. */
    void update(Map<String, Long> counters) {
        String line = line(counters, elapsedMillis());
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

    String line(Map<String, Long> c, long elapsedMs) {
        long finished = get(c, Outcomes.OK) + get(c, Outcomes.SKIPPED) + get(c, Outcomes.FAILED);
        String[] names = {"prepare", "imatrix", "quantize", "quality", "throughput"};
        long[] done = {get(c, Outcomes.MODELS), get(c, Outcomes.IMATRICES), get(c, Outcomes.CHECKPOINTS),
                get(c, Outcomes.QUALITY), get(c, Outcomes.THROUGHPUT)};
        long[] expected = {plan.models(), plan.imatrices(), plan.checkpoints(), plan.qualities(), plan.throughputs()};
        String stage = "write";
        long units = 0;
        long doneUnits = 0;
        for (int i = 0; i < names.length; i++) {
            units += expected[i];
            doneUnits += Math.min(done[i], expected[i]);
        }
        for (int i = 0; i < names.length && finished < plan.configs(); i++) {
            // Failures finish configs early, so a stage may end below its expected count: the stage
            // is the first with work left only while no later stage has started.
            boolean laterStarted = false;
            for (int j = i + 1; j < names.length; j++) {
                laterStarted |= done[j] > 0;
            }
            if (done[i] < expected[i] && !laterStarted) {
                stage = names[i] + " " + done[i] + "/" + expected[i];
                break;
            }
        }
        String eta = doneUnits == 0 || units == 0 ? "--:--"
                : clock(elapsedMs * (units - doneUnits) / doneUnits);
        return String.format("sweep %d/%d configs | %s | %s elapsed | ETA %s",
                Math.min(finished, plan.configs()), plan.configs(), stage, clock(elapsedMs), eta);
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
