package qlab.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import qlab.engine.testing.Fixtures;

/** quantize at the command level: what it writes beside the quantized file. */
class QuantizeCommandTest {

    @TempDir
    static Path tmp;

    static Path model;

    @BeforeAll
    static void generate() throws Exception {
        model = tmp.resolve("tiny");
        assertEquals(0, CliRun.of("gen", "--preset", "tiny", "--seed", "5", "--out", model.toString()).exit());
    }

    /** Every tokenizer, template and generation file of the model directory goes with the file, so generate --chat works on it. */
    @Test
    void quantizingIntoAnotherDirectoryCarriesTheTokenizerAndChatTemplate() throws Exception {
        Path src = tmp.resolve("chat-model");
        Files.createDirectories(src);
        try (var files = Files.list(model)) {
            for (Path f : files.toList()) {
                Files.copy(f, src.resolve(f.getFileName()));
            }
        }
        Files.copy(Fixtures.oracle("chat", "qwen2.5_chat_template.jinja"), src.resolve("chat_template.jinja"));
        // Files a transformers checkpoint may also have; copied byte for byte whatever they hold.
        Files.writeString(src.resolve("special_tokens_map.json"), "{\"eos_token\": \"<|endoftext|>\"}\n");
        Files.writeString(src.resolve("vocab.json"), "{}\n");
        Files.writeString(src.resolve("merges.txt"), "#version: 0.2\n");
        Path out = tmp.resolve("elsewhere/q8.safetensors");
        CliRun q = CliRun.of("quantize", "--model", src.toString(), "--format", "q8_0", "--out", out.toString(), "--threads", "1");
        assertEquals(0, q.exit(), q.err());
        List<String> expected = List.of("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
                "chat_template.jinja", "generation_config.json", "vocab.json", "merges.txt");
        for (String f : expected) {
            assertTrue(Files.isRegularFile(out.resolveSibling(f)), f + " copied");
            assertArrayEquals(Files.readAllBytes(src.resolve(f)), Files.readAllBytes(out.resolveSibling(f)), f);
        }
        String[] chat = {"--prompt", "Hello there", "--chat", "--max-tokens", "4", "--ignore-eos", "--json", "--threads", "1"};
        CliRun fromDir = CliRun.of(concat(new String[] {"generate", "--model", src.toString()}, chat));
        CliRun fromFile = CliRun.of(concat(new String[] {"generate", "--model", out.toString()}, chat));
        assertEquals(0, fromDir.exit(), fromDir.err());
        assertEquals(0, fromFile.exit(), fromFile.err());
        JsonNode a = new ObjectMapper().readTree(fromDir.out());
        JsonNode b = new ObjectMapper().readTree(fromFile.out());
        assertEquals(a.get("prompt_ids"), b.get("prompt_ids"), "the same rendered chat prompt");
    }

    private static final Path TINY_K = qlab.engine.testing.GgmlFixtures.model("tiny-k");

    private static CliRun explain(String format) {
        return CliRun.of("quantize", "--model", TINY_K.toString(), "--format", format, "--explain");
    }

    /** The bits-per-weight figure of an --explain output's summary line (the line starting with the plan). */
    private static double bpw(CliRun r, String plan) {
        String line = r.out().lines().filter(l -> l.startsWith(plan + ": ")).findFirst().orElseThrow(() -> new AssertionError(r.out()));
        return Double.parseDouble(line.substring(plan.length() + 2, line.indexOf(" bits per weight")));
    }

    /** llama-quantize reads its type names in any case; so does --format, where no qlab format has the name. */
    @Test
    void namedTypesAreAcceptedInAnyCase() throws Exception {
        CliRun upper = explain("Q4_K_M");
        assertEquals(0, upper.exit(), upper.err());
        for (String typed : List.of("q4_k_m", "Q4_k_M", "q4_K_m")) {
            CliRun r = explain(typed);
            assertEquals(0, r.exit(), typed + ": " + r.err());
            assertEquals(upper.out(), r.out(), typed);
        }
        // A format typed in upper case is the format (a named type cannot take a group size).
        CliRun group = explain("Q8_0/g64");
        assertEquals(0, group.exit(), group.err());
        assertTrue(group.out().contains("q8_0/g64: "), group.out());
        // export reads --format the same way: the file type is llama.cpp's for Q4_K_M (15).
        Path gguf = tmp.resolve("lower.gguf");
        CliRun e = CliRun.of("export", "--model", TINY_K.toString(), "--format", "q4_k_m", "--out", gguf.toString(), "--threads", "1");
        assertEquals(0, e.exit(), e.err());
        assertEquals(15, qlab.quant.checkpoint.GgufCheckpoint.open(gguf).integer("general.file_type"));
    }

    /** Q4_0 (llama.cpp's recipe) is not q4_0 (the format on every matrix); --explain of each says what the other is. */
    @Test
    void theNamesThatAreBothAreToldApartByCase() {
        CliRun recipe = explain("Q4_0");
        CliRun format = explain("q4_0");
        assertEquals(0, recipe.exit(), recipe.err());
        assertEquals(0, format.exit(), format.err());
        double recipeBpw = bpw(recipe, "Q4_0");
        double formatBpw = bpw(format, "q4_0");
        assertTrue(recipeBpw > formatBpw + 0.5, recipe.out()); // Q8_0 or Q6_K on the tied embedding of 4096 x 384
        assertTrue(format.out().contains("model.embed_tokens.weight") && format.out().lines()
                .filter(l -> l.startsWith("model.")).allMatch(l -> l.contains(" q4_0 ")), format.out());
        assertTrue(format.out().contains(String.format("note: q4_0 is qlab's format on every matrix; Q4_0 (what llama-quantize "
                + "means by q4_0 in any case) is llama.cpp's named type, its recipe: ")), format.out());
        assertTrue(format.out().contains(String.format(": --format Q4_0, %.4f bits per weight%n", recipeBpw)), format.out());
        assertTrue(recipe.out().contains(String.format("; --format q4_0 puts q4_0 on every matrix: %.4f bits per weight%n",
                formatBpw)), recipe.out());
        // A name that reads both ways in neither spelling is refused, naming both.
        CliRun mixed = explain("q6_K");
        assertEquals(2, mixed.exit(), mixed.err());
        assertEquals(1, mixed.err().lines().count(), mixed.err());
        assertTrue(mixed.err().startsWith("qlab: format \"q6_K\" is ambiguous: Q6_K is llama.cpp's named type"), mixed.err());
        assertTrue(mixed.err().endsWith("q6_k is qlab's format on every matrix; write Q6_K or q6_k\n"), mixed.err());
        // Formats without a named type of the same name have no note.
        assertTrue(explain("q4_8").out().lines().noneMatch(l -> l.startsWith("note:")));
    }

    /** An unknown name lists qlab's formats, llama.cpp's named types, and says which names are both. */
    @Test
    void theUnknownFormatHintNamesBothKindsOfName() {
        CliRun r = CliRun.of("quantize", "--model", TINY_K.toString(), "--format", "q4_k_x", "--out", tmp.resolve("x").toString());
        assertEquals(2, r.exit(), r.err());
        assertEquals(1, r.err().lines().count(), r.err());
        String err = r.err();
        assertTrue(err.startsWith("qlab: unknown format \"q4_k_x\"; qlab's formats (one on every matrix): f32, "), err);
        assertTrue(err.contains("llama.cpp's named types (any case where no format has the name): Q4_0, "), err);
        assertTrue(err.contains("Q4_K_M"), err);
        assertTrue(err.contains("; Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q6_K, IQ4_NL, IQ4_XS are both: upper case is "
                + "llama.cpp's named type"), err);
        assertTrue(err.endsWith("lower case qlab's format on every matrix\n"), err);
    }

    static String[] concat(String[] a, String... b) {
        String[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
