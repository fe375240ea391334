package qlab.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import qlab.engine.testing.Fixtures;

/** {@code qlab tokenize} on the real-vocabulary model directory, checked against the reference ids. */
class TokenizeCommandTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;
    private Path model;
    private Path corpus;

    @BeforeEach
    void fixtures() {
        model = Fixtures.oracle("tiny-qwen2-realvocab");
        corpus = Fixtures.oracle("tokenizer", "corpus.jsonl");
    }

    @Test
    void writesTheReferenceIdsForEachLine() throws IOException {
        // The first 300 corpus lines plus every special-token/near-miss line, reduced to {"text"}.
        List<JsonNode> expected = new ArrayList<>();
        StringBuilder in = new StringBuilder();
        for (String line : Files.readAllLines(corpus)) {
            JsonNode node = JSON.readTree(line);
            String family = node.get("family").asText();
            if (expected.size() < 300 || family.equals("special_tokens")) {
                expected.add(node);
                in.append(JSON.writeValueAsString(JSON.createObjectNode().put("text", node.get("text").asText()))).append('\n');
            }
        }
        Path input = dir.resolve("in.jsonl");
        Path output = dir.resolve("out.jsonl");
        Files.writeString(input, in.toString());
        assertEquals(0, Main.run("tokenize", "--model", model.toString(), "--jsonl", input.toString(), "--out", output.toString()));
        List<String> lines = Files.readAllLines(output, StandardCharsets.UTF_8);
        assertEquals(expected.size(), lines.size());
        for (int i = 0; i < lines.size(); i++) {
            JsonNode got = JSON.readTree(lines.get(i));
            assertEquals(expected.get(i).get("text"), got.get("text"), "line " + (i + 1));
            assertEquals(expected.get(i).get("ids"), got.get("ids"), "line " + (i + 1));
        }
        assertTrue(expected.size() > 500);
    }

    @Test
    void badLinesAreOneLineErrorsWithFileAndLineNumber() throws IOException {
        Path output = dir.resolve("out.jsonl");
        String[][] cases = {
            {"{\"text\": \"ok\"}\n{\"txt\": \"no text\"}\n", "line 2: field \"text\" is missing"},
            {"{\"text\": \"ok\"}\n\n{\"text\": \"a\"\n", "line 3: invalid JSON"},
            {"{\"text\": 5}\n", "line 1: field \"text\" must be a string"},
        };
        for (String[] c : cases) {
            Path input = dir.resolve("bad.jsonl");
            Files.writeString(input, c[0]);
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            PrintStream saved = System.err;
            int code;
            try {
                System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
                code = Main.run("tokenize", "--model", model.toString(), "--jsonl", input.toString(), "--out", output.toString());
            } finally {
                System.setErr(saved);
            }
            String message = err.toString(StandardCharsets.UTF_8).strip();
            assertNotEquals(0, code);
            assertTrue(message.contains(input + ": " + c[1]), message);
            assertEquals(1, message.lines().count(), message);
            assertFalse(Files.exists(output), "no partial output");
        }
    }
}
