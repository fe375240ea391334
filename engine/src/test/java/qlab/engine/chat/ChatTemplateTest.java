package qlab.engine.chat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import qlab.engine.QlabException;
import qlab.engine.testing.Fixtures;

class ChatTemplateTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** The six oracle cases (Jinja2 as transformers configures it, cross-checked by transformers.js). */
    @Test
    void rendersTheOracleCasesExactly() throws IOException {
        Path cases = Fixtures.oracle("chat", "cases.jsonl");
        int checked = checkAll(Files.readAllLines(cases, StandardCharsets.UTF_8), "cases.jsonl");
        assertEquals(6, checked);
    }

    /**
     * Tool calls, tool results, a later system message, an unknown role and Python float formatting, rendered by
     * Jinja2 from the same template file (make_reference_cases.py beside the goldens).
     */
    @Test
    void rendersTheJinjaReferenceCasesExactly() throws IOException {
        int checked = checkAll(resourceLines("jinja_cases.jsonl"), "jinja_cases.jsonl");
        assertEquals(7, checked);
    }

    private static int checkAll(List<String> lines, String source) throws IOException {
        int checked = 0;
        for (String line : lines) {
            if (line.isBlank()) {
                continue;
            }
            JsonNode c = JSON.readTree(line);
            String name = c.get("name").asText();
            List<ChatMessage> messages = ChatMessage.listFromJson(c.get("messages"), source + " " + name);
            String rendered = ChatTemplate.qwen25().render(messages, tools(c.get("tools")),
                    c.get("add_generation_prompt").asBoolean());
            assertEquals(c.get("expected_text").asText(), rendered, name);
            checked++;
        }
        System.out.println("chat template: " + checked + " cases of " + source + " identical");
        return checked;
    }

    private static List<JsonNode> tools(JsonNode node) {
        if (node == null || node.isNull()) {
            return null;
        }
        List<JsonNode> tools = new ArrayList<>();
        node.forEach(tools::add);
        return tools;
    }

    @Test
    void floatsAreFormattedAsPythonRepr() throws IOException {
        int checked = 0;
        for (String line : resourceLines("python_float_repr.tsv")) {
            String[] fields = line.split("\t");
            double value = Double.longBitsToDouble(Long.parseUnsignedLong(fields[0], 16));
            assertEquals(fields[1], PythonJson.pythonFloatRepr(value), "bits " + fields[0]);
            checked++;
        }
        System.out.println("python float repr: " + checked + " values identical");
        assertTrue(checked > 3000);
    }

    @Test
    void emptyConversationAndBadMessagesAreErrors() throws IOException {
        assertThrows(QlabException.class, () -> ChatTemplate.qwen25().render(List.of(), null, true));
        QlabException noContent = assertThrows(QlabException.class, () -> ChatMessage.listFromJson(
                JSON.readTree("[{\"role\": \"user\"}]"), "chat.json"));
        assertEquals("chat.json: message 0: field \"content\" is missing (only an assistant message with tool_calls"
                + " may omit it)", noContent.getMessage());
        QlabException badRole = assertThrows(QlabException.class, () -> ChatMessage.listFromJson(
                JSON.readTree("[{\"role\": 3, \"content\": \"x\"}]"), "chat.json"));
        assertEquals("chat.json: message 0: field \"role\" must be a string", badRole.getMessage());
        QlabException badCall = assertThrows(QlabException.class, () -> ChatMessage.listFromJson(
                JSON.readTree("[{\"role\": \"assistant\", \"tool_calls\": [{\"function\": {\"name\": \"f\"}}]}]"),
                "chat.json"));
        assertEquals("chat.json: message 0: tool_calls[0]: field \"arguments\" is missing", badCall.getMessage());
    }

    private static List<String> resourceLines(String name) throws IOException {
        try (InputStream in = ChatTemplateTest.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IOException("test resource " + name + " is missing");
            }
            return new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8)).lines().toList();
        }
    }
}
