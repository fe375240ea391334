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

    // ETA = elapsed x (units left / units done), units = stage groups: 1 + 1 + 17 + 17 + 34 = 70.

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
}
