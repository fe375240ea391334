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

    /** The Llama 3 and Qwen3 oracle cases, each template chosen from its model's tokenizer_config.json. */
    @Test
    void rendersTheLlama3AndQwen3OracleCasesExactly() throws IOException {
        Fixtures.oracle("chat", "cases_llama3.jsonl");
        Path oracle = Fixtures.oracle();
        ChatTemplate llama3 = ChatTemplate.forModel(oracle.resolve("tiny-llama3-realvocab"));
        ChatTemplate qwen3 = ChatTemplate.forModel(oracle.resolve("tiny-qwen3-realvocab"));
        assertEquals(6, checkAll(Files.readAllLines(oracle.resolve("chat/cases_llama3.jsonl")), "cases_llama3.jsonl", llama3));
        assertEquals(6, checkAll(Files.readAllLines(oracle.resolve("chat/cases_qwen3.jsonl")), "cases_qwen3.jsonl", qwen3));
        assertEquals("<|eot_id|>", llama3.endOfTurn());
        assertEquals("<|im_end|>", qwen3.endOfTurn());
    }

    /** The verbatim template files are recognised as the templates they are; an edited one is refused. */
    @Test
    void templatesAreRecognisedFromTheirText() throws IOException {
        Path chat = Fixtures.oracle("chat");
        JsonNode config = JSON.readTree("{\"bos_token\": \"<s>\"}");
        String llama3 = Files.readString(chat.resolve("llama3_chat_template.jinja"));
        String qwen3 = Files.readString(chat.resolve("qwen3_chat_template.jinja"));
        String qwen25 = Files.readString(chat.resolve("qwen2.5_chat_template.jinja"));
        List<ChatMessage> hi = List.of(ChatMessage.user("hi"));
        assertEquals("<s><|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n",
                KnownChatTemplates.recognise(llama3, "t", config).render(hi, null, true));
        assertEquals(ChatTemplate.qwen3(), KnownChatTemplates.recognise(qwen3, "t", config));
        assertEquals(ChatTemplate.qwen25(), KnownChatTemplates.recognise(qwen25, "t", config));
        QlabException e = assertThrows(QlabException.class, () -> KnownChatTemplates.recognise(
                llama3.replace("| trim", ""), "tokenizer_config.json: field \"chat_template\"", config));
        assertEquals("tokenizer_config.json: field \"chat_template\" is not a chat template qlab knows"
                + " (known: Qwen3, Qwen2.5, Llama 3)", e.getMessage());
    }

    @Test
    void aModelWithoutATemplateIsAnError(@org.junit.jupiter.api.io.TempDir Path dir) throws IOException {
        Files.writeString(dir.resolve("tokenizer_config.json"), "{\"bos_token\": \"<s>\"}");
        QlabException e = assertThrows(QlabException.class, () -> ChatTemplate.forModel(dir));
        assertTrue(e.getMessage().contains("\"chat_template\" is missing"), e.getMessage());
    }

    private static int checkAll(List<String> lines, String source) throws IOException {
        return checkAll(lines, source, ChatTemplate.qwen25());
    }

    private static int checkAll(List<String> lines, String source, ChatTemplate template) throws IOException {
        int checked = 0;
        for (String line : lines) {
            if (line.isBlank()) {
                continue;
            }
            JsonNode c = JSON.readTree(line);
            String name = c.get("name").asText();
            List<ChatMessage> messages = ChatMessage.listFromJson(c.get("messages"), source + " " + name);
            java.util.Map<String, JsonNode> arguments = new java.util.HashMap<>();
            if (c.has("template_kwargs")) {
                c.get("template_kwargs").properties().forEach(e -> arguments.put(e.getKey(), e.getValue()));
            }
            String rendered = template.render(messages, tools(c.get("tools")),
                    c.get("add_generation_prompt").asBoolean(), arguments);
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
