package qlab.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import qlab.engine.util.StatusLine;

/**
 * The long commands' progress line (rate, ETA) on stderr: shown on a terminal, or with --progress
 * anywhere, never on stdout, and not in --json mode unless asked for.
 */
class ProgressCommandsTest {

    @TempDir
    static Path tmp;

    static Path model;
    static Path text;

    @BeforeAll
    static void generate() throws Exception {
        model = tmp.resolve("tiny");
        assertEquals(0, CliRun.of("gen", "--preset", "tiny", "--seed", "5", "--out", model.toString()).exit());
        text = Path.of(System.getProperty("qlab.home")).resolve("datasets/eval/en-prose.txt");
    }

    @AfterEach
    void forgetTheTerminal() {
        System.clearProperty(StatusLine.STDERR_TERMINAL_PROPERTY);
    }

    /** The last line a progress display shows: all units done, a rate, ETA 00:00. */
    private static Pattern finished(String label, String unit) {
        return Pattern.compile("(?m)(^|\\r)" + Pattern.quote(label) + " \\| ([\\d,.M]+)/\\2 " + unit + " \\| [\\d,.M]+ " + unit
                + "/s \\| \\d\\d:\\d\\d elapsed \\| ETA 00:00");
    }

    @Test
    void everyLongCommandShowsItsProgressWhenAsked() throws Exception {
        String m = model.toString();
        String[] eval = {"--text", text.toString(), "--max-tokens", "256", "--ctx", "64", "--threads", "1"};
        List<Object[]> commands = List.of(
                new Object[] {"ppl", "tokens", concat(new String[] {"ppl", "--model", m}, eval)},
                new Object[] {"kl: model", "tokens", concat(new String[] {"kl", "--base", m, "--model", m,
                    "--cache", tmp.resolve("cache").toString()}, eval)},
                new Object[] {"calibrate", "tokens", new String[] {"calibrate", "--model", m, "--text", text.toString(),
                    "--max-tokens", "256", "--ctx", "64", "--threads", "1", "--out", tmp.resolve("c.imatrix").toString()}},
                new Object[] {"quantize", "weights", new String[] {"quantize", "--model", m, "--format", "q8_0", "--threads", "1",
                    "--out", tmp.resolve("q/q8.safetensors").toString()}},
                new Object[] {"export", "weights", new String[] {"export", "--model", m, "--format", "q8_0+mlp-down=f16", "--threads", "1",
                    "--out", tmp.resolve("q8.gguf").toString()}});
        for (Object[] c : commands) {
            String[] args = (String[]) c[2];
            CliRun quiet = CliRun.of(args);
            assertEquals(0, quiet.exit(), quiet.err());
            assertFalse(quiet.err().contains("ETA"), "no progress into a pipe unless asked: " + quiet.err());
            CliRun shown = CliRun.of(concat(args, "--progress"));
            assertEquals(0, shown.exit(), shown.err());
            assertTrue(finished((String) c[0], (String) c[1]).matcher(shown.err()).find(), args[0] + ": " + shown.err());
            assertFalse(shown.out().contains("ETA"), args[0] + ": " + shown.out());
        }
        // kl computes its baseline first: the line counts both models' tokens (256 each).
        CliRun fresh = CliRun.of(concat(new String[] {"kl", "--base", m, "--model", m, "--cache", tmp.resolve("cache2").toString(),
            "--progress"}, eval));
        assertEquals(0, fresh.exit(), fresh.err());
        assertTrue(fresh.err().startsWith("kl: base model | 0/512 tokens | "), fresh.err());
        assertTrue(fresh.err().contains("kl: model | 512/512 tokens | "), fresh.err());
    }

    @Test
    void onATerminalItIsShownInPlaceButNotWithJson() throws Exception {
        System.setProperty(StatusLine.STDERR_TERMINAL_PROPERTY, "true");
        String[] ppl = {"ppl", "--model", model.toString(), "--text", text.toString(), "--max-tokens", "256", "--ctx", "64",
            "--threads", "1"};
        CliRun terminal = CliRun.of(ppl);
        assertEquals(0, terminal.exit(), terminal.err());
        assertTrue(terminal.err().startsWith("\rppl | 0/256 tokens | "), terminal.err());
        assertTrue(finished("ppl", "tokens").matcher(terminal.err()).find(), terminal.err());
        assertTrue(terminal.err().endsWith("\n"), "the line is ended before anything else is printed");

        CliRun json = CliRun.of(concat(ppl, "--json"));
        assertEquals(0, json.exit(), json.err());
        assertEquals("", json.err());
        new ObjectMapper().readTree(json.out());

        // --json --progress: the line on stderr, stdout exactly one JSON object.
        System.clearProperty(StatusLine.STDERR_TERMINAL_PROPERTY);
        for (String[] args : List.of(concat(ppl, "--json", "--progress"), new String[] {"kl", "--base", model.toString(),
            "--model", model.toString(), "--text", text.toString(), "--max-tokens", "256", "--ctx", "64", "--threads", "1",
            "--cache", tmp.resolve("cache3").toString(), "--json", "--progress"})) {
            CliRun both = CliRun.of(args);
            assertEquals(0, both.exit(), both.err());
            assertTrue(both.err().contains("ETA 00:00"), both.err());
            var parser = new ObjectMapper().createParser(both.out());
            new ObjectMapper().readTree(parser);
            assertEquals(null, parser.nextToken(), "nothing after the JSON object: " + both.out());
            assertTrue(both.out().strip().startsWith("{") && both.out().strip().endsWith("}"), both.out());
        }
    }

    private static String[] concat(String[] a, String... b) {
        String[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
