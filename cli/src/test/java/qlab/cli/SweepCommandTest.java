package qlab.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SweepCommandTest {

    @TempDir
    Path dir;

    private Path sweepFile(String formats) throws Exception {
        Files.writeString(dir.resolve("eval.txt"), "Some evaluation text.\n");
        Path f = dir.resolve("s.yaml");
        Files.writeString(f, """
                qlab_sweep: 1
                model: {preset: tiny, seed: 1}
                formats: [%s]
                group_sizes: [32, 128]
                threads: [1]
                evaluation: {text: eval.txt, ctx: 32, tokens: 64}
                measurements: [quality]
                """.formatted(formats));
        return f;
    }

    @Test
    void runsATinyMatrixOnTheRealEngine() throws Exception {
        Path text = Path.of(System.getProperty("qlab.home"), "datasets", "eval", "en-prose.txt");
        Path f = dir.resolve("real.yaml");
        Files.writeString(f, """
                qlab_sweep: 1
                model: {preset: tiny, seed: 3}
                formats: [q8_0, q2_0]
                group_sizes: [32]
                threads: [1]
                activations: [f32, int8]
                evaluation: {text: %s, ctx: 64, tokens: 256}
                measurements: [quality]
                """.formatted(text.toAbsolutePath()));
        Path out = dir.resolve("real-out");
        CliCapture c = CliCapture.run("sweep", f.toString(), "--out", out.toString(), "--cache", dir.resolve("cache").toString());
        StringBuilder reasons = new StringBuilder();
        var rows = qlab.pipeline.results.ResultFiles.readRows(java.util.List.of(out));
        for (var r : rows) {
            reasons.append(r).append('\n');
        }
        assertEquals(0, c.exit(), reasons.toString());
        assertTrue(c.err().contains("4 ok, 0 skipped, 0 failed"), c.err());
        // int8 activations: the same checkpoint file, measured through the int8 kernels to other numbers.
        try (var checkpoints = Files.list(dir.resolve("cache").resolve("checkpoints"))) {
            assertEquals(2, checkpoints.filter(x -> x.toString().endsWith(".ckpt")).count(), "one checkpoint per format");
        }
        for (String format : java.util.List.of("q8_0", "q2_0")) {
            var f32 = rows.stream().filter(r -> r.format().equals(format) && r.activations().equals("f32")).toList();
            var int8 = rows.stream().filter(r -> r.format().equals(format) && r.activations().equals("int8")).toList();
            assertEquals(1, f32.size(), reasons.toString());
            assertEquals(1, int8.size(), reasons.toString());
            double klF32 = f32.get(0).klMean();
            double klInt8 = int8.get(0).klMean();
            assertTrue(Double.isFinite(klF32) && Double.isFinite(klInt8) && klF32 > 0 && klInt8 > 0, reasons.toString());
            assertTrue(klF32 != klInt8, format + ": int8 activations KL " + klInt8 + " equals f32's " + klF32);
            assertEquals(f32.get(0).bitsPerWeight(), int8.get(0).bitsPerWeight());
        }
        try (var runs = Files.list(out.resolve("runs"))) {
            for (Path run : runs.toList()) {
                assertFalse(Files.exists(run.resolve(".temp-beam")), run + ": Beam's temporary directory left behind");
            }
        }
        CliCapture p = CliCapture.run("pareto", out.toString(), "--json");
        assertEquals(0, p.exit(), p.err());
        var json = new com.fasterxml.jackson.databind.ObjectMapper().readTree(p.out());
        var frontier = json.get("pareto_bpw_kl");
        // Fewer bits, more KL: each format's better activation path is on the frontier (the same bits, more KL: not).
        assertEquals(2, frontier.size(), p.out());
        double kl8 = 0;
        double kl2 = 0;
        for (var row : frontier) {
            assertTrue(row.get("kl_mean").asDouble() > 0, row.toString());
            if (row.get("format").asText().equals("q8_0")) {
                kl8 = row.get("kl_mean").asDouble();
            } else {
                kl2 = row.get("kl_mean").asDouble();
            }
        }
        assertTrue(kl8 < kl2, "q8_0 KL " + kl8 + " below q2_0 KL " + kl2);
        // a second run with the same --out measures nothing again
        CliCapture again = CliCapture.run("sweep", f.toString(), "--out", out.toString(), "--cache", dir.resolve("cache").toString());
        assertEquals(0, again.exit(), again.err());
        assertTrue(again.err().contains("nothing to run: every config already has a row"), again.err());
    }

    @Test
    void failedConfigsAreListedWithTheirReasons() throws Exception {
        // Three words of evaluation text do not fill one window of 32 tokens: every config fails at scoring.
        Path out = dir.resolve("failing-out");
        CliCapture c = CliCapture.run("sweep", sweepFile("q4_0, q8_0").toString(), "--out", out.toString(),
                "--no-report", "--no-progress");
        assertEquals(1, c.exit(), c.err());
        assertTrue(c.err().contains("0 ok, 0 skipped, 4 failed"), c.err());
        assertTrue(c.err().contains("4 configs failed:\n"), c.err());
        List<String> listed = c.err().lines().filter(l -> l.startsWith("  ") && l.contains("too short")).toList();
        assertEquals(4, listed.size(), c.err());
        for (String format : List.of("q4_0/32", "q4_0/128", "q8_0/32", "q8_0/128")) {
            assertTrue(listed.stream().anyMatch(l -> l.contains("(" + format + " t1)")), format + " not in\n" + c.err());
        }
    }

    @Test
    void aMatrixWithNoRunnableConfigIsAUserErrorNamingTheAxis() throws Exception {
        Path f = dir.resolve("none.yaml");
        Files.writeString(f, Files.readString(sweepFile("q4_0")).replace("group_sizes: [32, 128]", "group_sizes: [48]"));
        Path out = dir.resolve("none-out");
        CliCapture c = CliCapture.run("sweep", f.toString(), "--out", out.toString());
        assertEquals(2, c.exit(), c.err());
        assertEquals(1, c.err().lines().count(), c.err());
        assertTrue(c.err().startsWith("qlab: " + f + ": no runnable config: "), c.err());
        assertTrue(c.err().contains("\"group_sizes\" [48]"), c.err());
        assertFalse(Files.exists(out), "nothing is written for a matrix that cannot run");
    }

    @Test
    void aBadTokenizerFailsTheSweepBeforeAnyWork() throws Exception {
        Path model = dir.resolve("model");
        assertEquals(0, CliCapture.run("gen", "--preset", "tiny", "--out", model.toString()).exit());
        Files.writeString(model.resolve("tokenizer.json"), "{\"model\": {");
        Path f = dir.resolve("badtok.yaml");
        Files.writeString(f, Files.readString(sweepFile("q4_0")).replace("{preset: tiny, seed: 1}", "{path: " + model + "}"));
        Path out = dir.resolve("badtok-out");
        CliCapture c = CliCapture.run("sweep", f.toString(), "--out", out.toString(), "--no-progress");
        assertEquals(2, c.exit(), c.err());
        assertEquals(1, c.err().lines().count(), c.err());
        assertTrue(c.err().startsWith("qlab: " + model.resolve("tokenizer.json") + ": malformed JSON at line 1"), c.err());
        assertFalse(c.err().contains("[Source:"), c.err());
        assertFalse(Files.exists(out), "no checkpoint, no run directory: the model is checked first");
    }

    @Test
    void aMissingModelDirectoryIsNamed() throws Exception {
        Path f = dir.resolve("nomodel.yaml");
        Path model = dir.resolve("no-such-model");
        Files.writeString(f, Files.readString(sweepFile("q4_0")).replace("{preset: tiny, seed: 1}", "{path: " + model + "}"));
        CliCapture c = CliCapture.run("sweep", f.toString(), "--out", dir.resolve("nomodel-out").toString());
        assertEquals(2, c.exit(), c.err());
        assertEquals("qlab: nomodel.yaml:2: key \"model.path\": no such model directory or .gguf file: " + model + "\n", c.err());
    }

    @Test
    void aResultsDirectoryThatCannotBeLockedSaysWhy() throws Exception {
        Path out = dir.resolve("locked-out");
        Files.createDirectories(out.resolve(".lock")); // the lock file's name taken by a directory
        CliCapture c = CliCapture.run("sweep", sweepFile("q4_0").toString(), "--out", out.toString());
        assertEquals(2, c.exit(), c.err());
        assertEquals(1, c.err().lines().count(), c.err());
        assertTrue(c.err().startsWith("qlab: " + out + ": cannot lock: Is a directory ("), c.err());
    }

    @Test
    void theFlinkRunnerSaysHowToGetIt() throws Exception {
        CliCapture c = CliCapture.run("sweep", "--dry-run", sweepFile("q4_0").toString(), "--runner", "FlinkRunner");
        if (SweepCommand.onClasspath(SweepCommand.FLINK_RUNNER)) {
            assertEquals(0, c.exit(), c.err()); // a -Pflink build
        } else {
            assertEquals(2, c.exit(), c.err());
            assertEquals(1, c.err().lines().count(), c.err());
            assertTrue(c.err().startsWith("qlab: --runner FlinkRunner: the Flink runner is not in this build; "
                    + "add it with mvn -Pflink -DskipTests package"), c.err());
        }
    }

    @Test
    void dryRunListsTheExpandedConfigs() throws Exception {
        CliCapture c = CliCapture.run("sweep", "--dry-run", sweepFile("q4_0, q4_8").toString());
        assertEquals(0, c.exit(), c.err());
        assertTrue(c.out().contains("4 configs (3 runnable, 1 skipped, 0 duplicate combinations merged)"), c.out());
        assertTrue(c.out().contains("q4_8/32 t1  [skipped: q4_8 supports group size 128 only, not 32]"), c.out());
    }

    @Test
    void malformedSweepFileNamesLineAndKey() throws Exception {
        CliCapture c = CliCapture.run("sweep", sweepFile("q4_0, q9_9").toString());
        assertEquals(2, c.exit());
        assertTrue(c.err().startsWith("qlab: s.yaml:3: key \"formats[1]\": unknown format \"q9_9\""), c.err());
        assertEquals(1, c.err().lines().count());
    }

    @Test
    void unknownRunner() throws Exception {
        CliCapture c = CliCapture.run("sweep", sweepFile("q4_0").toString(), "--runner", "NoSuchRunner");
        assertEquals(2, c.exit());
        assertTrue(c.err().startsWith("qlab: --runner: "), c.err());
        assertTrue(c.err().contains("NoSuchRunner"), c.err());
    }

    @Test
    void malformedPipelineOption() throws Exception {
        CliCapture c = CliCapture.run("sweep", sweepFile("q4_0").toString(), "-O", "=3");
        assertEquals(2, c.exit());
        assertEquals("qlab: --pipeline-option: expected NAME=VALUE, got \"=3\"\n", c.err());
        CliCapture unknown = CliCapture.run("sweep", sweepFile("q4_0").toString(), "-O", "noSuchOption=3");
        assertEquals(2, unknown.exit());
        assertTrue(unknown.err().startsWith("qlab: --pipeline-option: "), unknown.err());
        assertEquals(1, unknown.err().lines().count(), unknown.err());
    }

    @Test
    void missingSweepFile() {
        CliCapture c = CliCapture.run("sweep", dir.resolve("none.yaml").toString());
        assertEquals(2, c.exit());
        assertEquals("qlab: " + dir.resolve("none.yaml") + ": no such sweep file\n", c.err());
    }
}
