package qlab.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import qlab.engine.model.Model;
import qlab.engine.tokenizer.Tokenizer;

/** {@code qlab train} end to end on a few KB of the train split: the directory it writes loads as a model. */
class TrainCommandTest {

    @TempDir
    Path dir;

    private Path data() throws Exception {
        String home = System.getProperty("qlab.home");
        String prose = Files.readString(Path.of(home, "datasets", "train", "en-prose.txt"));
        Path f = dir.resolve("prose.txt");
        Files.writeString(f, prose.substring(0, 12_000));
        return f;
    }

    private String[] args(Path data, Path out, String... more) {
        String[] base = {"train", "--preset", "tiny", "--vocab", "400", "--data", data.toString(), "--steps", "6",
            "--batch-tokens", "256", "--seq-len", "32", "--warmup", "2", "--eval-every", "3", "--eval-tokens", "64",
            "--checkpoint-every", "3", "--peak-gmacs", "50", "--threads", "2", "--out", out.toString()};
        String[] all = java.util.Arrays.copyOf(base, base.length + more.length);
        System.arraycopy(more, 0, all, base.length, more.length);
        return all;
    }

    @Test
    void writesAModelDirectoryEveryCommandLoads() throws Exception {
        Path data = data();
        Path out = dir.resolve("model");
        CliRun run = CliRun.of(args(data, out));
        assertEquals(0, run.exit(), run.err());
        for (String f : new String[] {"config.json", "model.safetensors", "tokenizer.json", "generation_config.json",
            "train.json", "loss.png", "loss.svg"}) {
            assertTrue(Files.isRegularFile(out.resolve(f)), f);
        }
        assertFalse(Files.exists(out.resolve("checkpoint.safetensors")), "the checkpoint is removed at the end");
        Model m = Model.load(out);
        assertEquals(Tokenizer.load(out).vocabSize(), m.config().vocabSize());
        JsonNode report = new ObjectMapper().readTree(out.resolve("train.json").toFile());
        assertEquals(6, report.get("train_loss").size());
        assertEquals(2, report.get("validation_loss").size());
        assertEquals(Files.size(data), report.get("data").get(0).get("bytes").asLong());
        assertTrue(report.get("products").get("fraction_of_peak").asDouble() > 0);
        // The weights written are those of the lowest validation loss (steps 3 and 6 were scored).
        JsonNode written = report.get("weights_written");
        assertEquals("best", written.get("choice").asText());
        double lowest = Math.min(report.get("validation_loss").get(0).get("loss").asDouble(),
                report.get("validation_loss").get(1).get("loss").asDouble());
        assertEquals(lowest, written.get("validation_loss").asDouble());
        assertTrue(run.err().contains("step 6/6"), run.err());
        assertTrue(run.out().contains("tokens/s"), run.out());

        CliRun generate = CliRun.of("generate", "--model", out.toString(), "--prompt", "The clock", "--max-tokens", "5");
        assertEquals(0, generate.exit(), generate.err());

        // Same command, one thread: the same bytes.
        Path again = dir.resolve("again");
        String[] oneThread = args(data, again);
        oneThread[java.util.Arrays.asList(oneThread).indexOf("--threads") + 1] = "1";
        assertEquals(0, CliRun.of(oneThread).exit());
        assertArrayEquals(Files.readAllBytes(out.resolve("model.safetensors")), Files.readAllBytes(again.resolve("model.safetensors")));
    }

    @Test
    void aRunThatDiedIsResumedToTheSameBytes() throws Exception {
        Path data = data();
        Path whole = dir.resolve("whole");
        assertEquals(0, CliRun.of(args(data, whole)).exit());

        // The same run, dying after step 4 (its checkpoint is from step 3), then resumed from the command line.
        Path died = dir.resolve("died");
        TrainCommand cmd = new TrainCommand();
        picocli.CommandLine cl = new picocli.CommandLine(cmd);
        cl.parseArgs(java.util.Arrays.copyOfRange(args(data, died), 1, args(data, died).length));
        RuntimeException crash = new RuntimeException("killed");
        try {
            qlab.engine.train.TrainRun.run(cmd.request(), (trainer, point, eval) -> {
                if (point.step() == 4) {
                    throw crash;
                }
            }, line -> { });
        } catch (RuntimeException e) {
            assertEquals(crash, e);
        }
        assertTrue(Files.isRegularFile(died.resolve("checkpoint.safetensors")));
        CliRun resumed = CliRun.of(args(data, died, "--resume"));
        assertEquals(0, resumed.exit(), resumed.err());
        assertTrue(resumed.err().contains("at step 3"), resumed.err());
        assertArrayEquals(Files.readAllBytes(whole.resolve("model.safetensors")), Files.readAllBytes(died.resolve("model.safetensors")));
        JsonNode a = new ObjectMapper().readTree(whole.resolve("train.json").toFile()).get("train_loss");
        JsonNode b = new ObjectMapper().readTree(died.resolve("train.json").toFile()).get("train_loss");
        assertEquals(a, b);
    }

    @Test
    void badInputIsOneLineNamingTheOption() throws Exception {
        CliRun run = CliRun.of(args(data(), dir.resolve("x"), "--lr", "-1"));
        assertEquals(2, run.exit());
        assertEquals(1, run.err().strip().lines().count(), run.err());
        assertTrue(run.err().contains("--lr"), run.err());

        CliRun weights = CliRun.of(args(data(), dir.resolve("w"), "--weights", "middle"));
        assertEquals(2, weights.exit());
        assertEquals(1, weights.err().strip().lines().count(), weights.err());
        assertTrue(weights.err().contains("--weights"), weights.err());

        CliRun resume = CliRun.of(args(data(), dir.resolve("none"), "--resume"));
        assertEquals(2, resume.exit());
        assertTrue(resume.err().contains("checkpoint"), resume.err());
    }
}
