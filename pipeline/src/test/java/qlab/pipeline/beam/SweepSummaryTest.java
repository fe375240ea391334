package qlab.pipeline.beam;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class SweepSummaryTest {

    private static SweepSummary withFailures(int n) {
        List<String> failures = IntStream.range(0, n).mapToObj(i -> "id" + i + " (q4_0/32 t1): reason " + i).toList();
        return new SweepSummary("RUN", Path.of("out"), Path.of("out/runs/RUN/results.parquet"), 0, 0, n, 0, List.of(),
                1000, 900, null, failures);
    }

    @Test
    void listsAtMostTwentyFailuresAndCountsTheRest() {
        String text = withFailures(25).describe();
        assertTrue(text.contains("25 configs failed:\n"), text);
        List<String> listed = text.lines().filter(l -> l.startsWith("  id")).toList();
        assertEquals(SweepSummary.FAILURES_LISTED, listed.size(), text);
        assertEquals("  id0 (q4_0/32 t1): reason 0", listed.getFirst());
        assertTrue(text.contains("  ... and 5 more (status_reason in out/runs/RUN/results.parquet)\n"), text);
    }

    @Test
    void listsEveryFailureUpToTwenty() {
        String text = withFailures(1).describe();
        assertTrue(text.contains("1 config failed:\n  id0 (q4_0/32 t1): reason 0\n"), text);
        assertEquals(0, text.lines().filter(l -> l.contains("more")).count(), text);
        assertTrue(!withFailures(0).describe().contains("failed:"));
    }
}
