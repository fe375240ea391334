package qlab.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
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
    void refusesToRunWithoutTheEngineEvaluator() throws Exception {
        Path out = dir.resolve("out");
        CliCapture c = CliCapture.run("sweep", sweepFile("q4_0").toString(), "--out", out.toString());
        assertEquals(2, c.exit());
        assertTrue(c.err().startsWith("qlab: sweep: the engine evaluator is not available in this build yet"), c.err());
        assertFalse(Files.exists(out.resolve("runs")), "no results without an evaluator");
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
