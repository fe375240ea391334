package qlab.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import qlab.pipeline.results.ResultFiles;
import qlab.pipeline.results.ResultSchema;

class ParetoCommandTest {

    @TempDir
    Path dir;

    private static GenericRecord row(String run, long time, String id, String format, double bpw, double kl,
                                     double ppl, double tps) {
        GenericData.Record r = new GenericData.Record(ResultSchema.CURRENT);
        r.put("run_id", run);
        r.put("timestamp", time);
        r.put("code_version", "test");
        r.put("host", "h");
        r.put("cpu", "c");
        r.put("cores", 2);
        r.put("jdk", "25");
        r.put("vector_bits", 512);
        r.put("model_id", "tiny");
        r.put("model_hash", "mh");
        r.put("config_id", id);
        r.put("format", format);
        r.put("group_size", 32);
        r.put("tensor_overrides", Map.of());
        r.put("threads", 1);
        r.put("bits_per_weight", bpw);
        r.put("kl_mean", kl);
        r.put("ppl", ppl);
        r.put("decode_tps_median", tps);
        r.put("status", "ok");
        return r;
    }

    private void files() throws Exception {
        List<GenericRecord> run1 = new ArrayList<>();
        run1.add(row("r1", 1, "a", "q8_0", 8.5, 0.001, 12.0, 30));
        run1.add(row("r1", 1, "b", "q4_0", 4.5, 0.02, 12.5, 50));
        run1.add(row("r1", 1, "c", "q4_8", 4.6, 0.03, 12.6, 45)); // dominated everywhere by b
        ResultFiles.writeAtomically(dir.resolve("runs/r1/results.parquet"), run1);
        // A later run re-measured b, worse: the newest row counts unless --all-rows.
        ResultFiles.writeAtomically(dir.resolve("runs/r2/results.parquet"),
                List.of(row("r2", 2, "b", "q4_0", 4.5, 0.05, 13.0, 50), row("r2", 2, "d", "q2_0", 2.5, 0.4, 18.0, 70)));
    }

    @Test
    void textTableOfTheNewestRows() throws Exception {
        files();
        CliCapture c = CliCapture.run("pareto", dir.toString());
        assertEquals(0, c.exit(), c.err());
        assertTrue(c.out().startsWith("5 rows from 2 file(s), newest row of each of 4 configs"), c.out());
        assertTrue(c.out().contains("Pareto frontier: bits per weight vs KL (4 of 4 quantizations)"), c.out());
        assertTrue(c.out().contains("0.05000"), "b's newer row is used");
    }

    @Test
    void jsonFrontiers() throws Exception {
        files();
        CliCapture c = CliCapture.run("pareto", "--json", dir.resolve("runs/r1/results.parquet").toString());
        assertEquals(0, c.exit(), c.err());
        JsonNode j = new ObjectMapper().readTree(c.out());
        List<String> bpwKl = new ArrayList<>();
        j.get("pareto_bpw_kl").forEach(n -> bpwKl.add(n.get("config_id").asText()));
        assertEquals(List.of("b", "a"), bpwKl);
        // Rows without an activations value were measured with f32 activations.
        j.get("pareto_bpw_kl").forEach(n -> assertEquals("f32", n.get("activations").asText()));
        List<String> tpsKl = new ArrayList<>();
        j.get("pareto_tps_kl").forEach(n -> tpsKl.add(n.get("config_id").asText()));
        assertEquals(List.of("b", "a"), tpsKl);
    }

    @Test
    void int8ActivationRowsAreToldApart() throws Exception {
        GenericRecord int8 = row("r1", 1, "b8", "q4_0", 4.5, 0.03, 12.7, 60);
        int8.put("activations", "int8");
        ResultFiles.writeAtomically(dir.resolve("runs/r1/results.parquet"),
                List.of(row("r1", 1, "b", "q4_0", 4.5, 0.02, 12.5, 50), int8));
        CliCapture c = CliCapture.run("pareto", dir.toString());
        assertEquals(0, c.exit(), c.err());
        // Faster but worse: both on the speed frontier, each under its own label.
        String tpsKl = c.out().substring(c.out().indexOf("Pareto frontier: decode tok/s vs KL"));
        assertTrue(tpsKl.contains("q4_0/32 t1 int8 ") && tpsKl.contains("q4_0/32 t1 "), c.out());
        JsonNode j = new ObjectMapper().readTree(CliCapture.run("pareto", "--json", dir.toString()).out());
        List<String> activations = new ArrayList<>();
        j.get("pareto_tps_kl").forEach(n -> activations.add(n.get("config_id").asText() + "=" + n.get("activations").asText()));
        assertEquals(List.of("b8=int8", "b=f32"), activations);
    }

    @Test
    void allRowsKeepsEveryMeasurement() throws Exception {
        files();
        CliCapture c = CliCapture.run("pareto", "--all-rows", "--json", dir.toString());
        JsonNode j = new ObjectMapper().readTree(c.out());
        List<String> bpwKl = new ArrayList<>();
        j.get("pareto_bpw_kl").forEach(n -> bpwKl.add(n.get("config_id").asText() + "@" + n.get("run_id").asText()));
        assertEquals(List.of("d@r2", "b@r1", "a@r1"), bpwKl);
    }

    @Test
    void sensitivityRowsAreNotQuantizationsToChoose() throws Exception {
        GenericRecord probe = row("r1", 1, "probe", "f32", 30.2, 0.0005, 12.0, 10);
        probe.put("tensor_overrides", Map.of("L0.q", "q4_0"));
        ResultFiles.writeAtomically(dir.resolve("runs/r1/results.parquet"),
                List.of(row("r1", 1, "ref", "f32", 32, 0.0, 12.0, 5), probe, row("r1", 1, "b", "q4_0", 4.5, 0.02, 12.5, 50)));
        new qlab.pipeline.sensitivity.SensitivityTable("f32", "mh", List.of(
                new qlab.pipeline.sensitivity.SensitivityTable.Entry("L0.q", "f32", 32, 10, 40, 0, null, 0, null),
                new qlab.pipeline.sensitivity.SensitivityTable.Entry("L0.q", "q4_0", 32, 10, 6, 0.0005, null, 0.0005, "probe")))
                .write(qlab.pipeline.sensitivity.SensitivityTable.file(dir));
        CliCapture c = CliCapture.run("pareto", "--json", dir.toString());
        assertEquals(0, c.exit(), c.err());
        List<String> bpwKl = new ArrayList<>();
        new ObjectMapper().readTree(c.out()).get("pareto_bpw_kl").forEach(n -> bpwKl.add(n.get("config_id").asText()));
        assertEquals(List.of("b", "ref"), bpwKl);
    }

    @Test
    void missingPathIsOneLine() {
        CliCapture c = CliCapture.run("pareto", dir.resolve("nope").toString());
        assertEquals(2, c.exit());
        assertEquals("qlab: " + dir.resolve("nope") + ": no such file or directory\n", c.err());
    }

    @Test
    void aDirectoryWithoutResultFilesIsAnError() throws Exception {
        Path empty = java.nio.file.Files.createDirectories(dir.resolve("empty"));
        CliCapture c = CliCapture.run("pareto", empty.toString());
        assertEquals(2, c.exit(), c.err());
        assertEquals("qlab: " + empty + ": no result files (.parquet) found; a sweep writes them (./qlab sweep FILE)\n",
                c.err());
        assertEquals("", c.out());
    }

    /** The rows record the hash of the model they measured: exporting from another model is refused. */
    @Test
    void exportGgufRefusesAModelTheRowsWereNotMeasuredOn() throws Exception {
        files(); // rows of model hash "mh"
        Path model = dir.resolve("tiny");
        assertEquals(0, CliRun.of("gen", "--preset", "tiny", "--seed", "3", "--no-tokenizer", "--out", model.toString()).exit());
        Path frontier = dir.resolve("frontier");
        CliCapture c = CliCapture.run("pareto", dir.resolve("runs").toString(), "--export-gguf", frontier.toString(),
                "--model", model.toString());
        assertEquals(2, c.exit(), c.err());
        assertEquals(1, c.err().lines().count(), c.err());
        String hash = qlab.engine.model.ModelHash.of(model).substring(0, 12);
        assertTrue(c.err().startsWith("qlab: --model " + model + " is not the model these results were measured on: its hash is "
                + hash + ", the frontier's rows have mh (tiny; "), c.err());
        assertTrue(java.nio.file.Files.notExists(frontier), "nothing exported");
    }
}
