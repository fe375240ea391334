package qlab.pipeline.beam;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import qlab.pipeline.FakeEvaluator;
import qlab.pipeline.QuantSpec;
import qlab.pipeline.SweepFiles;
import qlab.pipeline.results.ResultFiles;
import qlab.pipeline.results.ResultRow;
import qlab.pipeline.sensitivity.SensitivityTable;

/**
 * A sensitivity sweep through the sweep's pipeline with the fake evaluator: one config per (group,
 * format) plus the reference, resumed without redoing anything, the same rows on Flink, and the
 * table of bytes and KL increases derived from the rows and the tiny model's shapes.
 */
public class SensitivitySweepTest {

    @TempDir
    Path dir;

    /** The tiny preset by kind: emb, q, k, v, o, gate, up, down (tied head) x 2 candidates, and the reference. */
    public static final String SENSITIVITY = """
            qlab_sweep: 1
            name: sens
            mode: sensitivity
            model:
              preset: tiny
              seed: 7
            sensitivity:
              reference: f32
              grouping: kind
            formats: [q8_0, q4_0]
            group_sizes: [32]
            threads: [1]
            evaluation:
              text: eval.txt
              ctx: 64
              tokens: 256
            measurements: [quality]
            """;

    private static SweepOptions options(Path sweep, Path out, String... args) {
        SweepOptions o = PipelineOptionsFactory.fromArgs(args).as(SweepOptions.class);
        o.setSweepFile(sweep.toString());
        o.setOut(out.toString());
        o.setReport(false);
        return o;
    }

    @Test
    void oneConfigPerGroupAndFormatResumedWithoutRedoingAny() throws Exception {
        Path sweep = SweepFiles.write(dir, "s.yaml", SENSITIVITY);
        Path out = dir.resolve("out");
        SweepSummary s = SweepPipeline.run(options(sweep, out), new FakeEvaluator.Factory("sens"));
        assertEquals(17, s.ok());
        assertEquals(0, s.failed());
        List<ResultRow> rows = ResultFiles.readRows(List.of(out));
        assertEquals(17, rows.size(), "the derived table is not read as result rows");
        assertTrue(rows.stream().allMatch(r -> r.format().equals("f32") && r.tensorOverrides().size() <= 1));
        assertEquals(2, rows.stream().filter(r -> Map.of("down", "q4_0").equals(r.tensorOverrides())).count()
                + rows.stream().filter(r -> Map.of("emb", "q8_0").equals(r.tensorOverrides())).count());

        SensitivityTable t = SensitivityTable.read(out);
        assertEquals("f32", t.reference());
        assertEquals(8 * 3, t.entries().size());
        Map<String, SensitivityTable.Entry> q = t.entries().stream().filter(e -> e.group().equals("q"))
                .collect(Collectors.toMap(SensitivityTable.Entry::format, e -> e, (a, b) -> a, TreeMap::new));
        // Two layers of a 64 x 64 q_proj: 8192 weights; q4_0 stores 18 bytes per 32, q8_0 34, f32 4 per weight.
        assertEquals(8192, q.get("q4_0").weights());
        assertEquals(8192 / 32 * 18, q.get("q4_0").bytes());
        assertEquals(8192 / 32 * 34, q.get("q8_0").bytes());
        assertEquals(8192 * 4, q.get("f32").bytes());
        assertEquals(0.0, q.get("f32").klIncrease());
        assertNull(q.get("f32").configId());
        double ref = FakeEvaluator.klMean(new QuantSpec("f32", null, Map.of()), false);
        double q4 = FakeEvaluator.klMean(new QuantSpec("f32", 32, Map.of("q", "q4_0")), false);
        assertEquals(q4, q.get("q4_0").klMean(), 1e-15);
        assertEquals(q4 - ref, q.get("q4_0").klIncrease(), 1e-15);
        assertEquals("q4_0/g32", q.get("q4_0").planFormat());

        int quantized = FakeEvaluator.calls("sens", "quantize");
        SweepSummary again = SweepPipeline.run(options(sweep, out), new FakeEvaluator.Factory("sens"));
        assertEquals(0, again.ok());
        assertEquals(quantized, FakeEvaluator.calls("sens", "quantize"), "a finished (group, format) is not redone");
        assertEquals(t, SensitivityTable.read(out));
    }

    @Test
    void resumeAfterACrashRedoesNoFinishedElement() throws Exception {
        Path sweep = SweepFiles.write(dir, "s.yaml", SENSITIVITY.replace("tokens: 256",
                "tokens: " + FakeEvaluator.CRASH_AT_QUALITY_TOKENS));
        Path out = dir.resolve("out");
        SweepOptions one = options(sweep, out);
        one.as(org.apache.beam.runners.direct.DirectOptions.class).setTargetParallelism(1);
        qlab.engine.QlabException e = org.junit.jupiter.api.Assertions.assertThrows(qlab.engine.QlabException.class,
                () -> SweepPipeline.run(one, new FakeEvaluator.Factory("sens-crash", java.util.Set.of(), java.util.Set.of(), 6)));
        assertTrue(e.getMessage().contains("simulated crash"), e.getMessage());
        long journaled;
        try (java.util.stream.Stream<Path> files = java.nio.file.Files.walk(out.resolve(".journal"))) {
            journaled = files.filter(p -> p.toString().endsWith(".parquet")).count();
        }
        assertTrue(journaled > 0 && journaled <= 6, "finished before the crash: " + journaled);

        SweepSummary resumed = SweepPipeline.run(options(sweep, out), new FakeEvaluator.Factory("sens-resume"));
        assertEquals(1, resumed.recoveredRuns().size());
        assertEquals(17 - journaled, resumed.ok());
        assertEquals(17 - journaled, FakeEvaluator.calls("sens-resume", "quality"), "no finished element is measured again");
        List<ResultRow> rows = ResultFiles.readRows(List.of(out));
        assertEquals(17, rows.size());
        assertEquals(17, rows.stream().map(ResultRow::configId).distinct().count());
        assertEquals(24, SensitivityTable.read(out).entries().size());
    }

    @Test
    void flinkAndDirectRunnerGiveTheSameRows() throws Exception {
        Path sweep = SweepFiles.write(dir, "s.yaml", SENSITIVITY);
        SweepSummary f = SweepPipeline.run(options(sweep, dir.resolve("flink"), "--runner=FlinkRunner",
                "--flinkMaster=[local]", "--parallelism=2"), new FakeEvaluator.Factory("sens-flink"));
        SweepSummary d = SweepPipeline.run(options(sweep, dir.resolve("direct")), new FakeEvaluator.Factory("sens-direct"));
        assertEquals(17, f.ok());
        List<String> columns = List.of("config_id", "status", "format", "group_size", "tensor_overrides",
                "bits_per_weight", "file_bytes", "kl_mean", "kl_se");
        assertEquals(project(SweepPipelineTest.duck(d.resultFile().toString()), columns),
                project(SweepPipelineTest.duck(f.resultFile().toString()), columns));
        assertEquals(SensitivityTable.read(dir.resolve("direct")).entries().stream().map(Object::toString).sorted().toList(),
                SensitivityTable.read(dir.resolve("flink")).entries().stream().map(Object::toString).sorted().toList());
    }

    private static List<Map<String, Object>> project(List<Map<String, Object>> rows, List<String> columns) {
        return rows.stream().map(r -> {
            Map<String, Object> m = new TreeMap<>();
            columns.forEach(c -> m.put(c, r.get(c)));
            return m;
        }).sorted(java.util.Comparator.comparing(Object::toString)).toList();
    }
}
