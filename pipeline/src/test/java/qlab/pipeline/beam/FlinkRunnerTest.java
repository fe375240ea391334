package qlab.pipeline.beam;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import qlab.pipeline.FakeEvaluator;
import qlab.pipeline.SweepFiles;

/**
 * The same sweep on Flink's embedded mini-cluster and on the DirectRunner gives the same rows.
 * The Flink runner is a test dependency of this module (the distribution carries it only when built
 * with {@code -Pflink}), so this runs in every build.
 */
class FlinkRunnerTest {

    @TempDir
    Path dir;

    private static final List<String> COMPARED = List.of("config_id", "status", "status_reason", "model_hash",
            "format", "group_size", "tensor_overrides", "imatrix", "threads", "bits_per_weight", "file_bytes", "ppl",
            "ppl_se", "kl_mean", "kl_se", "kl_p99", "top1_agree", "prefill_tps", "decode_tps_median", "batch_tps",
            "pareto_bpw_kl", "pareto_bpw_ppl", "pareto_tps_kl");

    @Test
    void flinkAndDirectRunnerAgreeRowForRow() throws Exception {
        Path sweep = SweepFiles.write(dir, "s.yaml", SweepFiles.MATRIX);
        SweepOptions onFlink = PipelineOptionsFactory.fromArgs("--runner=FlinkRunner", "--flinkMaster=[local]",
                "--parallelism=2").as(SweepOptions.class);
        onFlink.setSweepFile(sweep.toString());
        onFlink.setOut(dir.resolve("flink").toString());
        onFlink.setReport(false);
        SweepSummary f = SweepPipeline.run(onFlink, new FakeEvaluator.Factory("flink"));

        SweepOptions direct = PipelineOptionsFactory.as(SweepOptions.class);
        direct.setSweepFile(sweep.toString());
        direct.setOut(dir.resolve("direct").toString());
        direct.setReport(false);
        SweepSummary d = SweepPipeline.run(direct, new FakeEvaluator.Factory("flink-direct"));

        assertEquals(d.ok(), f.ok());
        assertEquals(d.skipped(), f.skipped());
        assertEquals(FakeEvaluator.calls("flink-direct", "quantize"), FakeEvaluator.calls("flink", "quantize"));
        assertEquals(0, FakeEvaluator.calls("flink", "throughput-not-alone"));
        double beside = FakeEvaluator.busyBesideThroughput("flink");
        assertTrue(beside < 0.5, "cores busy beside a throughput measurement on Flink (median): " + beside);
        List<Map<String, Object>> flinkRows = SweepPipelineTest.duck(f.resultFile().toString());
        List<Map<String, Object>> directRows = SweepPipelineTest.duck(d.resultFile().toString());
        assertEquals(34, flinkRows.size());
        assertEquals(project(directRows), project(flinkRows));
    }

    private static List<Map<String, Object>> project(List<Map<String, Object>> rows) {
        return rows.stream().map(r -> {
            Map<String, Object> m = new TreeMap<>();
            COMPARED.forEach(c -> m.put(c, r.get(c)));
            return m;
        }).toList();
    }
}
