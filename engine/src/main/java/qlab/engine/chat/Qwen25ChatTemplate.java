package qlab.engine.chat;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import qlab.engine.QlabException;

/**
 * The Qwen2.5-Instruct chat template (ChatML with tool calling), written out in Java. It renders what the Jinja
 * template in the model's {@code tokenizer_config.json} renders under transformers (trim_blocks, lstrip_blocks,
 * {@code tojson} = {@code json.dumps(ensure_ascii=False)}):
 * <ul>
 *   <li>a system turn first: the first message if it is a system message, else Qwen's default system prompt;
 *       with tools, the tool signatures and calling instructions are appended to that system turn;</li>
 *   <li>user messages, later system messages and assistant messages without tool calls as
 *       {@code <|im_start|>role\ncontent<|im_end|>\n};</li>
 *   <li>assistant tool calls as {@code <tool_call>} JSON blocks inside the assistant turn;</li>
 *   <li>consecutive tool results merged into one user turn of {@code <tool_response>} blocks;</li>
 *   <li>messages with any other role are left out, as the template does.</li>
 * </ul>
 */
final class Qwen25ChatTemplate implements ChatTemplate {
    static final Qwen25ChatTemplate INSTANCE = new Qwen25ChatTemplate();

    static final String DEFAULT_SYSTEM_PROMPT = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant.";
    static final String START = "<|im_start|>";
    static final String END = "<|im_end|>";

    static final String TOOLS_HEADER = "\n\n# Tools\n\nYou may call one or more functions to assist with the"
            + " user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>";
    static final String TOOLS_FOOTER = "\n</tools>\n\nFor each function call, return a json object with"
            + " function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n"
            + "{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call>";

    private Qwen25ChatTemplate() {
    }

    @Override
    public String endOfTurn() {
        return END;
    }

    @Override
    public String render(List<ChatMessage> messages, List<JsonNode> tools, boolean addGenerationPrompt) {
        if (messages.isEmpty()) {
            // The Jinja template reads messages[0] unconditionally and fails on an empty list.
            throw new QlabException("chat template: the conversation has no messages");
        }
        StringBuilder out = new StringBuilder();
        ChatMessage first = messages.get(0);
        String system = first.role().equals("system") ? first.content() : DEFAULT_SYSTEM_PROMPT;
        out.append(START).append("system\n").append(system);
        if (tools != null && !tools.isEmpty()) {
            out.append(TOOLS_HEADER);
            for (JsonNode tool : tools) {
                out.append('\n').append(PythonJson.dumps(tool));
            }
            out.append(TOOLS_FOOTER);
        }
        out.append(END).append('\n');

        for (int i = 0; i < messages.size(); i++) {
            ChatMessage message = messages.get(i);
            String role = message.role();
            boolean hasToolCalls = !message.toolCalls().isEmpty();
            if (role.equals("user") || (role.equals("system") && i > 0) || (role.equals("assistant") && !hasToolCalls)) {
                out.append(START).append(role).append('\n').append(message.content()).append(END).append('\n');
            } else if (role.equals("assistant")) {
                out.append(START).append(role);
                if (message.content() != null && !message.content().isEmpty()) {
                    out.append('\n').append(message.content());
                }
                for (ChatMessage.ToolCall call : message.toolCalls()) {
                    out.append("\n<tool_call>\n{\"name\": \"").append(call.name()).append("\", \"arguments\": ")
                            .append(PythonJson.dumps(call.arguments())).append("}\n</tool_call>");
                }
                out.append(END).append('\n');
            } else if (role.equals("tool")) {
                if (i == 0 || !messages.get(i - 1).role().equals("tool")) {
                    out.append(START).append("user");
                }
                out.append("\n<tool_response>\n").append(message.content()).append("\n</tool_response>");
                if (i == messages.size() - 1 || !messages.get(i + 1).role().equals("tool")) {
                    out.append(END).append('\n');
                }
            }
        }
        if (addGenerationPrompt) {
            out.append(START).append("assistant\n");
        }
        return out.toString();
    }
}
