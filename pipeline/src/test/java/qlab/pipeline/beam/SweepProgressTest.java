package qlab.pipeline.beam;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SweepProgressTest {

    // 42 rows: 34 runnable (1 model, 1 imatrix, 17 checkpoints, 17 quality evaluations, 34 timed) + 8 skipped.
    private final SweepProgress progress = new SweepProgress(new SweepPlan(42, 1, 1, 17, 17, 34), System.err);

    // Every unit the same work here: ETA = elapsed x (units left / units done), 1 + 1 + 17 + 17 + 34 = 70 units.

    @Test
    void stagesInOrder() {
        assertEquals("sweep 0/42 configs | running | 00:01 elapsed | ETA --:--",
                progress.line(Map.of(), 0, 1_000));
        assertEquals("sweep 8/42 configs | quantize 5/17 | 00:10 elapsed | ETA 01:30",
                progress.line(Map.of(Outcomes.SKIPPED, 8L, Outcomes.MODELS, 1L, Outcomes.IMATRICES, 1L,
                        Outcomes.CHECKPOINTS, 5L), 0, 10_000));
    }

    @Test
    void throughputProgressComesFromTheJournalBeforeItsCounterCommits() {
        Map<String, Long> c = Map.of(Outcomes.SKIPPED, 8L, Outcomes.MODELS, 1L, Outcomes.IMATRICES, 1L,
                Outcomes.CHECKPOINTS, 17L, Outcomes.QUALITY, 17L);
        // 12 journal files: the timed configs (skipped rows are not journaled).
        assertEquals("sweep 20/42 configs | throughput 12/34 | 01:10 elapsed | ETA 00:32",
                progress.line(c, 12, 70_000));
    }

    @Test
    void failedGroupsFinishTheirStage() {
        Map<String, Long> c = Map.of(Outcomes.SKIPPED, 8L, Outcomes.FAILED, 4L, Outcomes.MODELS, 1L,
                Outcomes.IMATRICES, 1L, Outcomes.CHECKPOINTS, 15L, "quantize" + Outcomes.GROUP_FAILED_SUFFIX, 2L,
                Outcomes.QUALITY, 3L);
        assertEquals("sweep 12/42 configs | quality 3/17 | 00:20 elapsed | ETA 00:43", progress.line(c, 4, 20_000));
    }

    @Test
    void runnerWithoutLiveMetricsShowsConfigsFromTheJournal() {
        assertEquals("sweep 13/42 configs | running | 00:08 elapsed | ETA --:--", progress.line(Map.of(), 13, 8_000));
    }

    @Test
    void allFinishedIsTheWriteStage() {
        assertEquals("sweep 42/42 configs | write | 1:00:05 elapsed | ETA 00:00",
                progress.line(Map.of(Outcomes.OK, 34L, Outcomes.SKIPPED, 8L, Outcomes.MODELS, 1L,
                        Outcomes.IMATRICES, 1L, Outcomes.CHECKPOINTS, 17L, Outcomes.QUALITY, 17L,
                        Outcomes.THROUGHPUT, 34L), 34, 3_605_000));
    }

    @Test
    void intoALogItWritesWholeLinesOnlyWhenSomethingChanged() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream log = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        SweepProgress p = new SweepProgress(new SweepPlan(42, 1, 1, 17, 17, 34), log, false);
        Map<String, Long> c = Map.of(Outcomes.SKIPPED, 8L, Outcomes.MODELS, 1L);
        for (int i = 0; i < 50; i++) {
            p.update(c, 0); // the same state again and again: one line
        }
        p.end();
        String text = bytes.toString(StandardCharsets.UTF_8);
        assertFalse(text.contains("\r"), text);
        assertEquals(1, text.lines().count(), text);
        assertTrue(text.startsWith("sweep 8/42 configs | imatrix 0/1 | "), text);
    }

    @Test
    void onATerminalItRewritesOneLine() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        SweepProgress p = new SweepProgress(new SweepPlan(42, 1, 1, 17, 17, 34),
                new PrintStream(bytes, true, StandardCharsets.UTF_8), true);
        p.update(Map.of(), 0);
        p.update(Map.of(), 0);
        p.end();
        String text = bytes.toString(StandardCharsets.UTF_8);
        assertEquals(2, text.chars().filter(ch -> ch == '\r').count(), text);
        assertTrue(text.endsWith("\n"), text);
    }

    /**
     * Quantizing and evaluating done at 0:20 with every throughput config to come: the ETA counts the
     * throughput work (34 configs of 3,552 token-equivalents), not the 34 units it would be by count.
     */
    @Test
    void theEtaWeighsTheStagesStillToComeByTheirWork() {
        double throughput = SweepPlan.throughputTokens(new qlab.pipeline.ThroughputSettings("p", true, 64, 32, 3,
                java.util.List.of(1, 2, 4, 8)));
        // per repeat: 64 + 32 decode steps x 4, then per batch size b x 32 prefill + 32 steps x 4
        assertEquals(3 * (64 + 128 + (1 + 2 + 4 + 8) * 32 + 4 * 128), throughput, 1e-9);
        SweepPlan plan = new SweepPlan(42, 1, 1, 17, 17, 34, new double[] {1024, 3000, 250, 1024, throughput});
        Map<String, Long> c = Map.of(Outcomes.SKIPPED, 8L, Outcomes.MODELS, 1L, Outcomes.IMATRICES, 1L,
                Outcomes.CHECKPOINTS, 17L, Outcomes.QUALITY, 17L);
        // done 1024 + 3000 + 17 x 250 + 17 x 1024 = 25,682; left 34 x 3,552 = 120,768: 20 s x 120768 / 25682
        assertEquals("sweep 8/42 configs | throughput 0/34 | 00:20 elapsed | ETA 01:34",
                new SweepProgress(plan, System.err, false).line(c, 0, 20_000));
        // the same point weighed by counts: 34 units left of 70
        assertEquals("sweep 8/42 configs | throughput 0/34 | 00:20 elapsed | ETA 00:18",
                progress.line(c, 0, 20_000));
    }
}
