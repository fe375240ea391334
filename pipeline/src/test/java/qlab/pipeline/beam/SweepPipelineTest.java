package qlab.pipeline.beam;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.apache.beam.runners.direct.DirectOptions;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import qlab.engine.QlabException;
import qlab.pipeline.FakeEvaluator;
import qlab.pipeline.QuantSpec;
import qlab.pipeline.SweepFiles;
import qlab.pipeline.matrix.Activations;
import qlab.pipeline.matrix.MatrixExpansion;
import qlab.pipeline.matrix.SweepConfig;
import qlab.pipeline.matrix.SweepFileParser;
import qlab.pipeline.pareto.ResultHistory;
import qlab.engine.bench.MachineInfo;
import qlab.pipeline.results.ResultFiles;
import qlab.pipeline.results.ResultRow;

/**
 * The real Beam pipeline on the DirectRunner with the fake evaluator, to real Parquet, read back with
 * DuckDB (a reader that shares no code with the writer) and checked column by column against the
 * fake's closed forms.
 */
class SweepPipelineTest {

    static {
        // The DirectRunner's immutability and encodability checks, off for users, on here.
        System.setProperty(SweepPipeline.DIRECT_CHECKS_PROPERTY, "true");
    }

    @TempDir
    Path dir;

    private static SweepOptions options(Path sweep, Path out) {
        SweepOptions o = PipelineOptionsFactory.as(SweepOptions.class);
        o.setSweepFile(sweep.toString());
        o.setOut(out.toString());
        o.as(DirectOptions.class).setTargetParallelism(3);
        return o;
    }

    @Test
    void endToEndEveryColumnThenRetryOfTheFailures() throws Exception {
        Path sweep = SweepFiles.write(dir, "s.yaml", SweepFiles.MATRIX);
        Path out = dir.resolve("out");
        long before = System.currentTimeMillis();
        FakeEvaluator.Factory failing = new FakeEvaluator.Factory("e2e", Set.of("q4_0"), Set.of("f32"), -1);
        SweepSummary s = SweepPipeline.run(options(sweep, out), failing);
        long after = System.currentTimeMillis();

        assertEquals(16, s.ok());
        assertEquals(8, s.skipped());
        assertEquals(10, s.failed());
        assertEquals(out.resolve("runs").resolve(s.runId()).resolve("results.parquet"), s.resultFile());
        assertTrue(Files.isRegularFile(s.resultFile()));
        assertFalse(Files.exists(out.resolve(".journal").resolve(s.runId())), "journal of a finished run is deleted");

        // Each distinct thing built once: 1 model, 1 importance matrix, 13 checkpoints
        // (q8_0 and q4_0: 2 groups x 2 imatrices; q4_8 and the mix: 2 imatrices; f32: 1),
        // 9 quality evaluations (the 4 q4_0 checkpoints failed), 16 timed configs.
        assertEquals(1, FakeEvaluator.calls("e2e", "prepare"));
        assertEquals(1, FakeEvaluator.calls("e2e", "imatrix"));
        assertEquals(13, FakeEvaluator.calls("e2e", "quantize"));
        assertEquals(9, FakeEvaluator.calls("e2e", "quality"));
        // Workers let go of cached models at each bundle's end (each stage runs at least one bundle).
        assertTrue(FakeEvaluator.calls("e2e", "release") >= 5, "release calls: " + FakeEvaluator.calls("e2e", "release"));
        assertEquals(16, FakeEvaluator.calls("e2e", "throughput"));
        assertEquals(0, FakeEvaluator.calls("e2e", "throughput-not-alone"), "a throughput measurement overlapped other work");
        // Asked for 3 DirectRunner workers; the pipeline uses 1 because it measures throughput, so its
        // driver thread cannot spin beside a measurement (with 3 workers: 2.0 cores busy here).
        double beside = FakeEvaluator.busyBesideThroughput("e2e");
        assertTrue(beside < 0.5, "cores busy beside a throughput measurement (median): " + beside);

        Map<String, SweepConfig> configs = new HashMap<>();
        MatrixExpansion.expand(SweepFileParser.parse(sweep)).configs().forEach(c -> configs.put(c.configId(), c));
        List<Map<String, Object>> rows = duck(out.resolve("runs") + "/*/results.parquet");
        assertEquals(34, rows.size());
        MachineInfo machine = MachineInfo.current();
        ObjectMapper json = new ObjectMapper();
        List<Map<String, Object>> okRows = new ArrayList<>();
        for (Map<String, Object> r : rows) {
            SweepConfig c = configs.remove((String) r.get("config_id"));
            assertNotNull(c, "row for an unknown config " + r.get("config_id"));
            String label = c.label();
            QuantSpec q = c.quant();
            boolean imatrix = c.calibration() != null;
            assertEquals(s.runId(), r.get("run_id"));
            long t = ((OffsetDateTime) r.get("timestamp")).toInstant().toEpochMilli();
            assertTrue(t >= before && t <= after, label + " timestamp");
            assertFalse(((String) r.get("code_version")).isEmpty());
            assertEquals(machine.host(), r.get("host"));
            assertEquals(machine.cpu(), r.get("cpu"));
            assertEquals(machine.cores(), r.get("cores"));
            assertEquals(machine.jdk(), r.get("jdk"));
            assertEquals(machine.vectorBits(), r.get("vector_bits"));
            assertEquals(q.format(), r.get("format"), label);
            assertEquals(q.groupSize(), r.get("group_size"), label);
            assertEquals(json.valueToTree(q.overrides()), json.readTree((String) r.get("tensor_overrides")), label);
            assertEquals(c.imatrixName(), r.get("imatrix"), label);
            assertEquals("f32", r.get("activations"), label);
            assertEquals(c.threads(), r.get("threads"), label);

            String status = (String) r.get("status");
            if (c.skipped()) {
                assertEquals("skipped", status, label);
                assertEquals(c.skipReason(), r.get("status_reason"));
                assertNull(r.get("model_hash"));
                assertNull(r.get("bits_per_weight"));
                continue;
            }
            assertEquals("tiny-seed7", r.get("model_id"));
            assertEquals(FakeEvaluator.modelHash(c.model()), r.get("model_hash"));
            if (q.format().equals("q4_0")) {
                assertEquals("failed", status, label);
                assertEquals("quantize q4_0: IllegalStateException: fake quantizer refuses q4_0", r.get("status_reason"));
                assertNull(r.get("bits_per_weight"));
                assertNull(r.get("ppl"));
                continue;
            }
            assertEquals(FakeEvaluator.bitsPerWeight(q), (Double) r.get("bits_per_weight"), 1e-12, label);
            assertEquals(FakeEvaluator.fileBytes(q), r.get("file_bytes"), label);
            if (q.format().equals("f32")) {
                assertEquals("failed", status, label);
                assertEquals("quality: ArithmeticException: ppl is NaN", r.get("status_reason"));
                assertNull(r.get("ppl"));
                assertNull(r.get("decode_tps_median"));
                continue;
            }
            assertEquals("ok", status, label);
            assertNull(r.get("status_reason"));
            double kl = FakeEvaluator.klMean(q, imatrix);
            double ppl = FakeEvaluator.ppl(q, imatrix);
            assertEquals(ppl, (Double) r.get("ppl"), 1e-12, label);
            assertEquals(ppl / 100, (Double) r.get("ppl_se"), 1e-12);
            assertEquals(kl, (Double) r.get("kl_mean"), 1e-15, label);
            assertEquals(kl / 10, (Double) r.get("kl_se"), 1e-15);
            assertEquals(kl * 5, (Double) r.get("kl_p99"), 1e-15);
            assertEquals(1 - kl, (Double) r.get("top1_agree"), 1e-12);
            double tps = FakeEvaluator.decodeTps(q, c.threads());
            assertEquals(tps * 10, (Double) r.get("prefill_tps"), 1e-9, label);
            assertEquals(tps, (Double) r.get("decode_tps_median"), 1e-9);
            assertEquals(tps * 0.9, (Double) r.get("decode_tps_min"), 1e-9);
            assertEquals(tps * 1.1, (Double) r.get("decode_tps_max"), 1e-9);
            JsonNode batch = json.readTree((String) r.get("batch_tps"));
            assertEquals(2, batch.size());
            assertEquals(1, batch.get(0).get("batch").asInt());
            assertEquals(FakeEvaluator.batchTps(q, c.threads(), 1), batch.get(0).get("tps").asDouble(), 1e-9);
            assertEquals(4, batch.get(1).get("batch").asInt());
            assertEquals(FakeEvaluator.batchTps(q, c.threads(), 4), batch.get(1).get("tps").asDouble(), 1e-9);
            assertEquals(123_456_789L, r.get("peak_rss_bytes"));
            assertEquals(FakeEvaluator.decodeBytes(q), r.get("decode_bytes"), label);
            assertEquals(FakeEvaluator.readGbs(c.threads()), (Double) r.get("read_bandwidth_gbs"), 1e-12, label);
            assertEquals(FakeEvaluator.fmaGmacs(c.threads()), (Double) r.get("fma_peak_gmacs"), 1e-12, label);
            assertNotNull(r.get("load_avg_before"), "load recorded before the timing");
            assertNotNull(r.get("load_avg_after"), "load recorded after the timing");
            okRows.add(r);
        }
        assertTrue(configs.isEmpty(), "configs without a row: " + configs.keySet());

        // Frontier flags, checked against a brute-force dominance test written here.
        checkFrontierFlags(okRows, "bits_per_weight", false, "kl_mean", "pareto_bpw_kl");
        checkFrontierFlags(okRows, "bits_per_weight", false, "ppl", "pareto_bpw_ppl");
        checkFrontierFlags(okRows, "decode_tps_median", true, "kl_mean", "pareto_tps_kl");

        // The report and the charts.
        String html = Files.readString(out.resolve("report.html"));
        assertTrue(html.contains("<table class=\"frontier\" id=\"pareto_bpw_kl\">"), "frontier table in the report");
        assertTrue(html.contains("data:image/png;base64,"), "charts embedded in the report");
        assertFalse(html.contains("src=\"charts/"), "report must not depend on files beside it");
        for (String chart : List.of("kl_vs_bpw", "ppl_vs_bpw", "decode_tps_vs_bpw", "batch_scaling")) {
            byte[] png = Files.readAllBytes(out.resolve("charts").resolve(chart + ".png"));
            assertTrue(png.length > 1000 && png[1] == 'P' && png[2] == 'N' && png[3] == 'G', chart + ".png");
            String svg = Files.readString(out.resolve("charts").resolve(chart + ".svg"));
            assertTrue(svg.contains("<svg") && svg.length() > 1000, chart + ".svg");
        }

        // Re-run into the same directory, the failures fixed: only the 10 failed configs run again.
        SweepSummary second = SweepPipeline.run(options(sweep, out), new FakeEvaluator.Factory("e2e-retry"));
        assertEquals(10, second.ok());
        assertEquals(0, second.skipped());
        assertEquals(0, second.failed());
        assertEquals(4, FakeEvaluator.calls("e2e-retry", "quantize"), "the f32 checkpoint comes from the cache");
        assertEquals(5, FakeEvaluator.calls("e2e-retry", "quality"), "4 new checkpoints and the NaN one, not cached");
        assertEquals(10, FakeEvaluator.calls("e2e-retry", "throughput"));
        List<ResultRow> history = ResultFiles.readRows(List.of(out));
        assertEquals(44, history.size(), "history keeps the failed rows");
        List<ResultRow> latest = ResultHistory.latest(history);
        assertEquals(34, latest.size());
        assertEquals(26, latest.stream().filter(ResultRow::ok).count());
        assertEquals(26, history.stream().filter(ResultRow::ok).map(ResultRow::configId).distinct().count());
        assertEquals(26, history.stream().filter(ResultRow::ok).count(), "no config has two ok rows");

        // A third run has nothing left to do and adds no file.
        SweepSummary third = SweepPipeline.run(options(sweep, out), new FakeEvaluator.Factory("e2e-third"));
        assertNull(third.resultFile());
        try (Stream<Path> runs = Files.list(out.resolve("runs"))) {
            assertEquals(2, runs.count());
        }
        assertEquals(0, FakeEvaluator.calls("e2e-third", "prepare"));
    }

    @Test
    void resumeAfterACrashHasEveryRowExactlyOnce() throws Exception {
        Path sweep = SweepFiles.write(dir, "s.yaml", SweepFiles.MATRIX);
        Path out = dir.resolve("out");
        FakeEvaluator.Factory crashing = new FakeEvaluator.Factory("crash", Set.of(), Set.of(), 5);
        QlabException e = assertThrows(QlabException.class, () -> SweepPipeline.run(options(sweep, out), crashing));
        assertTrue(e.getMessage().contains("simulated crash"), e.getMessage());
        assertFalse(Files.exists(out.resolve("runs")), "the killed run wrote no final file");
        assertTrue(ResultFiles.find(List.of(out)).isEmpty(), "journal files are hidden from the history view");
        try (Stream<Path> files = Files.walk(out.resolve(".journal"))) {
            // The 5 configs measured before the crash (skipped rows are not journaled).
            assertEquals(5, files.filter(p -> p.toString().endsWith(".parquet")).count());
        }

        SweepSummary resumed = SweepPipeline.run(options(sweep, out), new FakeEvaluator.Factory("resume"));
        assertEquals(1, resumed.recoveredRuns().size());
        assertEquals(21, resumed.ok());
        assertEquals(8, resumed.skipped(), "the killed run's skipped rows are added by its successor");
        assertEquals(21, FakeEvaluator.calls("resume", "throughput"));
        assertEquals(0, FakeEvaluator.calls("resume", "quantize"), "checkpoints of the killed run are reused");
        assertEquals(0, FakeEvaluator.calls("resume", "quality"), "quality of the killed run is reused");

        List<Map<String, Object>> rows = duck(out.resolve("runs") + "/*/results.parquet");
        assertEquals(34, rows.size());
        assertEquals(34, rows.stream().map(r -> r.get("config_id")).distinct().count(), "every config exactly once");
        assertEquals(26, rows.stream().filter(r -> "ok".equals(r.get("status"))).count());
        assertEquals(8, rows.stream().filter(r -> "skipped".equals(r.get("status"))).count());
        assertEquals(5, rows.stream().filter(r -> !resumed.runId().equals(r.get("run_id"))).count());
        assertFalse(Files.exists(out.resolve(".journal").resolve(resumed.runId())));
    }

    @Test
    void int8ActivationsShareTheCheckpointButNotTheMeasurements() throws Exception {
        String withoutAxis = SweepFiles.MATRIX
                .replace("  - f32\n  - q8_0\n  - q4_0\n  - q4_8\n  - q4_8+attn=q8_0\n", "  - f32\n  - q4_0\n")
                .replace("[32, 128]", "[32]").replace("imatrix: [none, cal]", "imatrix: [none]");
        Path out = dir.resolve("out");
        // A results directory from before the axis: f32, 2 thread counts, 4 configs.
        SweepSummary first = SweepPipeline.run(options(SweepFiles.write(dir, "f32.yaml", withoutAxis), out),
                new FakeEvaluator.Factory("act-f32"));
        assertEquals(4, first.ok());

        Path sweep = SweepFiles.write(dir, "both.yaml",
                withoutAxis.replace("imatrix: [none]\n", "imatrix: [none]\nactivations: [f32, int8]\n"));
        List<SweepConfig> configs = MatrixExpansion.expand(SweepFileParser.parse(sweep)).configs();
        SweepPlan plan = SweepPlan.of(configs, 0);
        assertEquals(2, plan.checkpoints(), "f32 and q4_0/32: int8 activations need no checkpoint of their own");
        assertEquals(3, plan.qualities(), "f32, q4_0/32 with f32 and with int8 activations");

        // The f32 configs kept their ids, so only the 2 int8 configs run, from the cached checkpoint.
        SweepSummary second = SweepPipeline.run(options(sweep, out), new FakeEvaluator.Factory("act-both"));
        assertEquals(2, second.ok());
        assertEquals(0, second.failed());
        assertEquals(0, FakeEvaluator.calls("act-both", "quantize"), "the int8 configs use the f32 configs' checkpoint");
        assertEquals(1, FakeEvaluator.calls("act-both", "quality"), "not the cached f32 quality of the same checkpoint");
        assertEquals(2, FakeEvaluator.calls("act-both", "throughput"));

        List<Map<String, Object>> rows = duck(out.resolve("runs") + "/*/results.parquet");
        assertEquals(6, rows.size());
        Map<String, SweepConfig> byId = new HashMap<>();
        configs.forEach(c -> byId.put(c.configId(), c));
        Map<String, Double> kl = new HashMap<>();
        for (Map<String, Object> r : rows) {
            SweepConfig c = byId.get((String) r.get("config_id"));
            assertNotNull(c, "row for an unknown config " + r.get("config_id"));
            boolean int8 = c.activations() == Activations.INT8;
            assertEquals(int8 ? "int8" : "f32", r.get("activations"), c.label());
            assertEquals(int8 ? second.runId() : first.runId(), r.get("run_id"), c.label());
            assertEquals("ok", r.get("status"), c.label());
            assertEquals(FakeEvaluator.klMean(c.quant(), false, int8), (Double) r.get("kl_mean"), 1e-15, c.label());
            assertEquals(FakeEvaluator.decodeTps(c.quant(), int8, c.threads()), (Double) r.get("decode_tps_median"),
                    1e-9, c.label());
            kl.put(c.label(), (Double) r.get("kl_mean"));
        }
        assertTrue(kl.get("q4_0/32 t1 int8") > kl.get("q4_0/32 t1"), kl.toString());
        // Read back for pareto and the report: int8 rows are told apart by their label.
        List<ResultRow> read = ResultFiles.readRows(List.of(out));
        assertEquals(Set.of("f32 t1", "f32 t2", "q4_0/32 t1", "q4_0/32 t2", "q4_0/32 t1 int8", "q4_0/32 t2 int8"),
                Set.copyOf(read.stream().map(ResultRow::label).toList()));
        assertTrue(Files.readString(out.resolve("report.html")).contains("q4_0/32 t2 int8"));
    }

    @Test
    void kvCacheTypesShareTheCheckpointButNotTheMeasurements() throws Exception {
        String withoutAxis = SweepFiles.MATRIX
                .replace("  - f32\n  - q8_0\n  - q4_0\n  - q4_8\n  - q4_8+attn=q8_0\n", "  - f32\n  - q4_0\n")
                .replace("[32, 128]", "[32]").replace("imatrix: [none, cal]", "imatrix: [none]")
                .replace("threads: [1, 2]", "threads: [2]");
        Path out = dir.resolve("out");
        SweepSummary first = SweepPipeline.run(options(SweepFiles.write(dir, "f32.yaml", withoutAxis), out),
                new FakeEvaluator.Factory("kv-f32"));
        assertEquals(2, first.ok());

        Path sweep = SweepFiles.write(dir, "kv.yaml",
                withoutAxis.replace("imatrix: [none]\n", "imatrix: [none]\nkv_cache: [f32, q8_0, {k: q8_0, v: q4_0}]\n"));
        List<SweepConfig> configs = MatrixExpansion.expand(SweepFileParser.parse(sweep)).configs();
        assertEquals(6, configs.size(), "f32 weights too: the cache type is independent of the weights' format");
        SweepPlan plan = SweepPlan.of(configs, 0);
        assertEquals(2, plan.checkpoints(), "the cache types need no checkpoint of their own");
        assertEquals(6, plan.qualities());

        // The f32-cache configs kept their ids: only the 4 others run, from the cached checkpoints.
        SweepSummary second = SweepPipeline.run(options(sweep, out), new FakeEvaluator.Factory("kv-all"));
        assertEquals(4, second.ok());
        assertEquals(0, second.failed());
        assertEquals(0, FakeEvaluator.calls("kv-all", "quantize"));
        assertEquals(4, FakeEvaluator.calls("kv-all", "quality"));

        Map<String, SweepConfig> byId = new HashMap<>();
        configs.forEach(c -> byId.put(c.configId(), c));
        List<Map<String, Object>> rows = duck(out.resolve("runs") + "/*/results.parquet");
        assertEquals(6, rows.size());
        for (Map<String, Object> r : rows) {
            SweepConfig c = byId.get((String) r.get("config_id"));
            assertNotNull(c, "row for an unknown config " + r.get("config_id"));
            assertEquals(c.kvCache().yamlName(), r.get("kv_cache"), c.label());
            assertEquals(FakeEvaluator.klMean(c.quant(), false, false) + FakeEvaluator.kvCacheKl(c.kvCache()),
                    (Double) r.get("kl_mean"), 1e-15, c.label());
        }
        List<ResultRow> read = ResultFiles.readRows(List.of(out));
        assertEquals(Set.of("f32 t2", "q4_0/32 t2", "f32 t2 kv=q8_0", "q4_0/32 t2 kv=q8_0", "f32 t2 kv=k=q8_0,v=q4_0",
                "q4_0/32 t2 kv=k=q8_0,v=q4_0"), Set.copyOf(read.stream().map(ResultRow::label).toList()));
        assertTrue(Files.readString(out.resolve("report.html")).contains("q4_0/32 t2 kv=q8_0"));
    }

    @Test
    void measurementsNotAskedForAreNull() throws Exception {
        String yaml = SweepFiles.MATRIX.substring(0, SweepFiles.MATRIX.indexOf("measurements:"))
                .replace("  - f32\n  - q8_0\n  - q4_0\n  - q4_8\n  - q4_8+attn=q8_0\n", "  - q8_0\n  - q4_0\n")
                .replace("[32, 128]", "[32]").replace("threads: [1, 2]", "threads: [2]")
                + "measurements: [quality]\n";
        Path sweep = SweepFiles.write(dir, "q.yaml", yaml);
        Path out = dir.resolve("out");
        SweepOptions byName = options(sweep, out);
        byName.setEvaluatorFactory(FakeEvaluator.Factory.class.getName());
        SweepSummary s = SweepPipeline.run(byName);
        assertEquals(4, s.ok());
        assertEquals(4, FakeEvaluator.calls("by-class-name", "quality"));
        assertEquals(0, FakeEvaluator.calls("by-class-name", "throughput"));
        List<Map<String, Object>> rows = duck(s.resultFile().toString());
        assertEquals(4, rows.size());
        for (Map<String, Object> r : rows) {
            assertNotNull(r.get("kl_mean"));
            for (String col : List.of("prefill_tps", "decode_tps_median", "decode_tps_min", "decode_tps_max",
                    "batch_tps", "peak_rss_bytes", "load_avg_before", "load_avg_after", "pareto_tps_kl")) {
                assertNull(r.get(col), col);
            }
            assertNotNull(r.get("pareto_bpw_kl"));
        }
    }

    private static void checkFrontierFlags(List<Map<String, Object>> rows, String xCol, boolean maxX, String yCol,
                                           String flagCol) {
        int members = 0;
        for (Map<String, Object> a : rows) {
            double ax = (Double) a.get(xCol);
            double ay = (Double) a.get(yCol);
            boolean dominated = false;
            for (Map<String, Object> b : rows) {
                double bx = (Double) b.get(xCol);
                double by = (Double) b.get(yCol);
                boolean xNoWorse = maxX ? bx >= ax : bx <= ax;
                boolean xBetter = maxX ? bx > ax : bx < ax;
                dominated |= xNoWorse && by <= ay && (xBetter || by < ay);
            }
            assertEquals(!dominated, a.get(flagCol), flagCol + " of " + a.get("config_id"));
            members += dominated ? 0 : 1;
        }
        assertTrue(members > 0 && members < rows.size(), flagCol + " frontier is a proper subset");
    }

    /** All rows of the Parquet files matching {@code glob}, through DuckDB; nested columns as JSON text. */
    static List<Map<String, Object>> duck(String glob) throws SQLException {
        List<Map<String, Object>> rows = new ArrayList<>();
        try (Connection c = DriverManager.getConnection("jdbc:duckdb:");
             Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT * REPLACE (to_json(tensor_overrides)::VARCHAR AS tensor_overrides, "
                     + "to_json(batch_tps)::VARCHAR AS batch_tps) FROM read_parquet('" + glob + "') ORDER BY config_id, timestamp")) {
            int n = rs.getMetaData().getColumnCount();
            while (rs.next()) {
                Map<String, Object> row = new HashMap<>();
                for (int i = 1; i <= n; i++) {
                    row.put(rs.getMetaData().getColumnName(i), rs.getObject(i));
                }
                rows.add(row);
            }
        }
        return rows;
    }
}
