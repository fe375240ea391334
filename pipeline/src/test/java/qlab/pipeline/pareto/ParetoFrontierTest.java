package qlab.pipeline.pareto;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import qlab.pipeline.pareto.ParetoFrontier.Goal;
import qlab.pipeline.results.ResultRow;

class ParetoFrontierTest {

    @Test
    void minimizeBoth() {
        //            A    B    C    D    E    F    G(=A)  H(NaN)
        double[] x = {1, 2, 3, 4, 2.5, 5, 1, Double.NaN};
        double[] y = {10, 5, 5, 1, 6, 1, 10, 0};
        // C loses to B on x at equal y; E loses to B on both; F loses to D on x; G ties A exactly,
        // and equal points do not dominate each other; H has no x and takes no part.
        assertArrayEquals(new boolean[]{true, true, false, true, false, false, true, false},
                ParetoFrontier.members(x, Goal.MINIMIZE, y, Goal.MINIMIZE));
    }

    @Test
    void maximizeOneMinimizeTheOther() {
        //            P1   P2   P3   P4   P5
        double[] tps = {100, 80, 90, 50, 120};
        double[] kl = {0.5, 0.1, 0.6, 0.1, 2.0};
        assertArrayEquals(new boolean[]{true, true, false, false, true},
                ParetoFrontier.members(tps, Goal.MAXIMIZE, kl, Goal.MINIMIZE));
    }

    @Test
    void singlePointAndEmptySet() {
        assertArrayEquals(new boolean[]{true}, ParetoFrontier.members(new double[]{3}, Goal.MINIMIZE,
                new double[]{4}, Goal.MINIMIZE));
        assertEquals(0, ParetoFrontier.members(new double[0], Goal.MINIMIZE, new double[0], Goal.MINIMIZE).length);
    }

    @Test
    void frontierOfRowsSkipsNonOkAndIncompleteRowsAndSortsAlongX() {
        List<ResultRow> rows = List.of(
                row("q8", 8.5, 0.001, 12.01, 40.0, "ok"),
                row("q4", 4.5, 0.02, 12.2, 60.0, "ok"),
                row("q4bad", 4.6, 0.03, 12.3, 55.0, "ok"),
                row("q2", 2.5, 0.4, 16.0, 80.0, "ok"),
                row("b1fail", 1.5, 0.0001, 11.0, 99.0, "failed"),
                row("noquality", 3.0, null, null, 70.0, "ok"));
        assertEquals(List.of("q2", "q4", "q8"), ids(ParetoFrontier.frontier(rows, ParetoFrontier.BPW_KL)));
        assertEquals(List.of("q2", "q4", "q8"), ids(ParetoFrontier.frontier(rows, ParetoFrontier.BPW_PPL)));
        // Best (highest) tok/s first.
        assertEquals(List.of("q2", "q4", "q8"), ids(ParetoFrontier.frontier(rows, ParetoFrontier.TPS_KL)));
        assertEquals(4, ParetoFrontier.candidates(rows, ParetoFrontier.BPW_KL).size());
    }

    @Test
    void tableShowsEachFrontier() {
        List<ResultRow> rows = List.of(row("a", 8.5, 0.001, 12.01, 40.0, "ok"), row("b", 4.5, 0.02, 12.2, 60.0, "ok"));
        String text = FrontierTable.text(rows);
        assertTrue(text.contains("Pareto frontier: bits per weight vs KL (2 of 2 quantizations)"), text);
        assertTrue(text.contains("q4_0/32 "), text);
        assertTrue(text.contains("decode tok/s vs KL (2 of 2 rows)"), text);
        assertTrue(text.contains("q4_0/32 t1"), text);
        assertTrue(text.contains("0.02000"), text);
        String json = FrontierTable.json(rows);
        assertTrue(json.contains("\"pareto_tps_kl\""), json);
        assertTrue(json.contains("\"config_id\" : \"b\""), json);
    }

    @Test
    void latestRowPerConfigNeverHidesAnOkRowBehindAFailure() {
        ResultRow ok = withTime(row("c", 4.5, 0.02, 12.2, 60.0, "ok"), 1, "run1");
        ResultRow failedLater = withTime(row("c", null, null, null, null, "failed"), 2, "run2");
        ResultRow newerOk = withTime(row("c", 4.5, 0.03, 12.3, 61.0, "ok"), 3, "run3");
        assertEquals(List.of(ok), ResultHistory.latest(List.of(ok, failedLater)));
        assertEquals(List.of(newerOk), ResultHistory.latest(List.of(newerOk, ok, failedLater)));
    }

    @Test
    void qualityFrontiersListEachQuantizationOnceWhateverItsThreadCounts() {
        ResultRow t1 = row("q4-t1", 4.5, 0.02, 12.2, 40.0, "ok");
        ResultRow t2 = withThreads(row("q4-t2", 4.5, 0.02, 12.2, 70.0, "ok"), 2);
        ResultRow q8t1 = row("q8-t1", 8.5, 0.001, 12.01, 30.0, "ok");
        ResultRow q8t2 = withThreads(row("q8-t2", 8.5, 0.001, 12.01, 25.0, "ok"), 2);
        List<ResultRow> rows = List.of(t1, t2, withFormat(q8t1, "q8_0"), withFormat(q8t2, "q8_0"));
        // One point per quantization, the fastest of its rows; no thread count in its label.
        assertEquals(List.of("q4-t2", "q8-t1"), ids(ParetoFrontier.frontier(rows, ParetoFrontier.BPW_KL)));
        assertEquals(List.of("q4-t2", "q8-t1"), ids(ParetoFrontier.frontier(rows, ParetoFrontier.BPW_PPL)));
        assertEquals(2, ParetoFrontier.candidates(rows, ParetoFrontier.BPW_KL).size());
        assertEquals("q4_0/32", ParetoFrontier.BPW_KL.label(t2));
        // Speed depends on the threads: there each config is its own point.
        assertEquals(4, ParetoFrontier.candidates(rows, ParetoFrontier.TPS_KL).size());
        assertEquals("q4_0/32 t2", ParetoFrontier.TPS_KL.label(t2));
        String text = FrontierTable.text(rows);
        assertTrue(text.contains("bits per weight vs KL (2 of 2 quantizations)"), text);
        // Another measurement of the same quantization (another run, other code) is another point.
        ResultRow remeasured = row("q4-again", 4.5, 0.03, 12.3, 40.0, "ok");
        assertEquals(List.of("q4-t2", "q4-again"), ids(ParetoFrontier.candidates(List.of(t1, t2, remeasured), ParetoFrontier.BPW_KL)));
    }

    private static ResultRow withThreads(ResultRow r, int threads) {
        return new ResultRow(r.runId(), r.timestamp(), r.configId(), r.modelId(), r.modelHash(), r.format(), r.groupSize(),
                r.tensorOverrides(), r.imatrix(), r.activations(), r.kvCache(), threads, r.bitsPerWeight(), r.fileBytes(), r.ppl(), r.pplSe(),
                r.klMean(), r.klSe(), r.klP99(), r.top1Agree(), r.prefillTps(), r.decodeTpsMedian(),
                r.decodeTpsMin(), r.decodeTpsMax(), r.batchTps(), r.peakRssBytes(), r.status(), r.statusReason(),
                r.machine(), r.decodeBytes(), r.readBandwidthGbs(), r.fmaPeakGmacs(), r.loadAvgBefore(), r.loadAvgAfter());
    }

    private static ResultRow withFormat(ResultRow r, String format) {
        return new ResultRow(r.runId(), r.timestamp(), r.configId(), r.modelId(), r.modelHash(), format, r.groupSize(),
                r.tensorOverrides(), r.imatrix(), r.activations(), r.kvCache(), r.threads(), r.bitsPerWeight(), r.fileBytes(), r.ppl(), r.pplSe(),
                r.klMean(), r.klSe(), r.klP99(), r.top1Agree(), r.prefillTps(), r.decodeTpsMedian(),
                r.decodeTpsMin(), r.decodeTpsMax(), r.batchTps(), r.peakRssBytes(), r.status(), r.statusReason(),
                r.machine(), r.decodeBytes(), r.readBandwidthGbs(), r.fmaPeakGmacs(), r.loadAvgBefore(), r.loadAvgAfter());
    }

    static ResultRow row(String id, Double bpw, Double kl, Double ppl, Double tps, String status) {
        return new ResultRow("run", 0L, id, "tiny", "hash", "q4_0", 32, Map.of(), null, "f32", "f32", 1, bpw,
                bpw == null ? null : 100L, ppl, null, kl, null, null, null, null, tps, null, null, null, null,
                status, null, ResultRow.Machine.UNKNOWN, null, null, null, null, null);
    }

    private static ResultRow withTime(ResultRow r, long time, String runId) {
        return new ResultRow(runId, time, r.configId(), r.modelId(), r.modelHash(), r.format(), r.groupSize(),
                r.tensorOverrides(), r.imatrix(), r.activations(), r.kvCache(), r.threads(), r.bitsPerWeight(), r.fileBytes(), r.ppl(), r.pplSe(),
                r.klMean(), r.klSe(), r.klP99(), r.top1Agree(), r.prefillTps(), r.decodeTpsMedian(),
                r.decodeTpsMin(), r.decodeTpsMax(), r.batchTps(), r.peakRssBytes(), r.status(), r.statusReason(),
                r.machine(), r.decodeBytes(), r.readBandwidthGbs(), r.fmaPeakGmacs(), r.loadAvgBefore(), r.loadAvgAfter());
    }

    private static List<String> ids(List<ResultRow> rows) {
        return rows.stream().map(ResultRow::configId).toList();
    }
}
