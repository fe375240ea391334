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

    static String[] concat(String[] a, String... b) {
        String[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
