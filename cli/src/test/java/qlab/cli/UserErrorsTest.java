package qlab.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Bad input through the command line: exit code 2 and one line that names the file and says why. */
class UserErrorsTest {

    @TempDir
    static Path tmp;

    static Path model;
    static Path shortText;
    static Path idsFile;

    @BeforeAll
    static void generate() throws Exception {
        model = tmp.resolve("tiny");
        assertEquals(0, CliRun.of("gen", "--preset", "tiny", "--seed", "5", "--out", model.toString()).exit());
        shortText = Files.writeString(tmp.resolve("short.txt"), "Too short.\n");
        idsFile = Files.writeString(tmp.resolve("ids.txt"), "1 2 3 4 5 6 7 8\n");
    }

    @Test
    void aModelThatDoesNotExistIsNamedAsSuch() {
        Path none = tmp.resolve("nonexistent");
        CliRun r = CliRun.of("ppl", "--model", none.toString(), "--text", shortText.toString());
        assertEquals(2, r.exit());
        assertEquals("qlab: " + none + ": no such model directory or file\n", r.err());
        CliRun ids = CliRun.of("ppl", "--model", none.toString(), "--ids", idsFile.toString(), "--ctx", "4");
        assertEquals(2, ids.exit());
        assertTrue(ids.err().startsWith("qlab: " + none + ": no such model directory or file"), ids.err());
    }

    @Test
    void pplOnATextShorterThanOneWindowNamesTheFile() {
        CliRun r = CliRun.of("ppl", "--model", model.toString(), "--text", shortText.toString(), "--ctx", "64");
        assertEquals(2, r.exit());
        assertEquals(1, r.err().lines().count(), r.err());
        assertTrue(r.err().startsWith("qlab: " + shortText + ": the text has "), r.err());
        assertTrue(r.err().contains("too short for one window of --ctx 64"), r.err());
    }

    @Test
    void malformedJsonIsReportedWithoutParserInternals() throws Exception {
        Path broken = tmp.resolve("broken");
        Files.createDirectories(broken);
        for (String f : List.of("config.json", "model.safetensors")) {
            Files.copy(model.resolve(f), broken.resolve(f));
        }
        // An object left open: Jackson's own message points at its start marker with "[Source: ...]".
        Files.writeString(broken.resolve("tokenizer.json"), "{\"model\": {");
        CliRun r = CliRun.of("ppl", "--model", broken.toString(), "--text", shortText.toString());
        assertEquals(2, r.exit());
        assertEquals("qlab: " + broken.resolve("tokenizer.json") + ": malformed JSON at line 1, column 12: "
                + "Unexpected end-of-input: expected close marker for Object (start marker at line 1, column 11)\n", r.err());
        Files.writeString(broken.resolve("config.json"), "{\"hidden_size\": [");
        CliRun c = CliRun.of("ppl", "--model", broken.toString(), "--ids", idsFile.toString(), "--ctx", "4");
        assertEquals(2, c.exit());
        assertFalse(c.err().contains("[Source:"), c.err());
        assertTrue(c.err().startsWith("qlab: " + broken.resolve("config.json") + ": not valid JSON at line 1"), c.err());
    }

    /** An --out under a regular file (a mistyped directory): one line naming both paths, before any work, for every writer. */
    @Test
    void anOutputUnderARegularFileIsOneLineForEveryWriter() throws Exception {
        Path plain = Files.writeString(tmp.resolve("plain"), "not a directory\n");
        String why = ": cannot write there: " + plain + " is a file, not a directory\n";
        String m = model.toString();
        String[][] commands = {
            {"quantize", "--model", m, "--format", "q8_0", "--out", plain + "/x.safetensors"},
            {"export", "--model", m, "--format", "q8_0", "--out", plain + "/x.gguf"},
            {"calibrate", "--model", m, "--ids", idsFile.toString(), "--ctx", "4", "--out", plain + "/x.imatrix"},
            {"logits", "--model", m, "--ids", "1,2,3", "--out", plain + "/x.f32"},
            {"tokenize", "--model", m, "--jsonl", shortText.toString(), "--out", plain + "/x.jsonl"},
            {"gen", "--preset", "tiny", "--out", plain + "/sub/model"}};
        for (String[] c : commands) {
            CliRun r = CliRun.of(c);
            String out = c[c.length - 1];
            assertEquals(2, r.exit(), c[0] + ": " + r.err());
            assertEquals("qlab: " + out + why, r.err(), c[0]);
        }
        assertEquals("not a directory\n", Files.readString(plain));
        CliRun dir = CliRun.of("quantize", "--model", m, "--format", "q8_0", "--out", tmp.toString());
        assertEquals(2, dir.exit());
        assertEquals("qlab: " + tmp + ": is a directory; give a file name\n", dir.err());
    }

    /** kl between models whose ids are different tokens: refused, naming what differs. */
    @Test
    void klRefusesModelsWithDifferentVocabularies() throws Exception {
        Path other = qlab.engine.testing.Fixtures.oracle().resolve("tiny-qwen2-realvocab"); // Qwen's 151,936 ids
        CliRun r = CliRun.of("kl", "--base", model.toString(), "--model", other.toString(), "--ids", idsFile.toString(),
                "--ctx", "4", "--cache", tmp.resolve("cache").toString());
        assertEquals(2, r.exit(), r.err());
        assertEquals(1, r.err().lines().count(), r.err());
        String vocab = r.err();
        assertTrue(vocab.startsWith("qlab: --base " + model + " has a vocabulary of "), vocab);
        assertTrue(vocab.contains(", --model " + other + " of "), vocab);
        assertTrue(vocab.endsWith(": models with different vocabularies cannot be compared token by token\n"), vocab);

        // Same weights and vocabulary size, one token renamed in the tokenizer.
        Path renamed = tmp.resolve("renamed");
        Files.createDirectories(renamed);
        for (String f : List.of("config.json", "model.safetensors", "tokenizer_config.json")) {
            Files.copy(model.resolve(f), renamed.resolve(f));
        }
        var json = new com.fasterxml.jackson.databind.ObjectMapper();
        var tok = (com.fasterxml.jackson.databind.node.ObjectNode) json.readTree(model.resolve("tokenizer.json").toFile());
        // The last added token gets another name (a vocabulary entry would also have to change in the merges).
        var added = (com.fasterxml.jackson.databind.node.ArrayNode) tok.get("added_tokens");
        var last = (com.fasterxml.jackson.databind.node.ObjectNode) added.get(added.size() - 1);
        String victim = last.get("content").asText();
        int id = last.get("id").asInt();
        last.put("content", "<|qlab_renamed|>");
        json.writeValue(renamed.resolve("tokenizer.json").toFile(), tok);
        CliRun t = CliRun.of("kl", "--base", model.toString(), "--model", renamed.toString(), "--ids", idsFile.toString(),
                "--ctx", "4", "--cache", tmp.resolve("cache").toString());
        assertEquals(2, t.exit(), t.err());
        assertEquals("qlab: --base " + model + " and --model " + renamed + " have different tokenizers: token " + id + " is \""
                + victim + "\" in --base's, \"<|qlab_renamed|>\" in --model's\n", t.err());

        // The same model on both sides still compares.
        CliRun same = CliRun.of("kl", "--base", model.toString(), "--model", model.toString(), "--ids", idsFile.toString(),
                "--ctx", "4", "--cache", tmp.resolve("cache").toString(), "--json");
        assertEquals(0, same.exit(), same.err());
    }

    /**
     * The launcher's filter (qlab, drop_incubator_warning) around a real JVM: the incubator warning
     * goes, the rest of stderr and the exit code stay.
     */
    @Test
    void theLauncherDropsOnlyTheIncubatorWarning() throws Exception {
        Path launcher = Path.of(System.getProperty("qlab.home"), "qlab");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String script = "source <(sed -n '/^INCUBATOR_WARNING=/p;/^drop_incubator_warning() {/,/^}/p' \"$1\")\n"
                + "exec \"$2\" --add-modules jdk.incubator.vector -cp \"$3\" NoSuchMainClass 2> >(drop_incubator_warning >&2)\n";
        List<String> command = new ArrayList<>(List.of("bash", "-c", script, "qlab-test", launcher.toString(), java,
                tmp.toString()));
        Process p = new ProcessBuilder(command).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        String err = new String(p.getErrorStream().readAllBytes());
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        assertEquals(1, p.exitValue(), err);
        assertFalse(err.contains("WARNING: Using incubator modules"), err);
        assertTrue(err.startsWith("Error: Could not find or load main class NoSuchMainClass"), err);
    }

    /** The launcher bounds kl's heap (its peak memory, docs/measure.md#memory) and no other command's. */
    @Test
    void theLauncherBoundsTheHeapOfKlOnly() throws Exception {
        Path launcher = Path.of(System.getProperty("qlab.home"), "qlab");
        String script = "L=$1; shift\n"
                + "source <(sed -n '/^HEAP=(/p;/= \"kl\" ] && HEAP=/p' \"$L\")\n"
                + "printf '%s' \"${HEAP[*]}\"\n";
        for (String[] c : new String[][] {{"kl", "-Xmx2g"}, {"ppl", "-XX:MaxRAMPercentage=75"}}) {
            Process p = new ProcessBuilder("bash", "-c", script, "qlab-test", launcher.toString(), c[0], "--help").start();
            String out = new String(p.getInputStream().readAllBytes());
            assertTrue(p.waitFor(60, TimeUnit.SECONDS));
            assertEquals(0, p.exitValue());
            assertEquals(c[1], out, c[0]);
        }
    }
}
