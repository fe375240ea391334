package qlab.engine.chat;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import java.util.Map;
import qlab.engine.QlabException;

/**
 * The Qwen3 chat template (ChatML with thinking and tool calling), written out in Java. It renders what the Jinja
 * template in the model's {@code tokenizer_config.json} renders under transformers:
 * <ul>
 *   <li>a system turn only when the first message is a system message or tools are given (then the tool
 *       signatures and calling instructions follow the system text); no default system prompt;</li>
 *   <li>an assistant message written as {@code <think>reasoning</think>answer} is split: turns before the last
 *       user query keep only the answer; later turns keep the reasoning in a {@code <think>\n…\n</think>\n\n}
 *       block, and the final turn always gets one (empty when there is no reasoning);</li>
 *   <li>assistant tool calls as {@code <tool_call>} JSON blocks; consecutive tool results merged into one user
 *       turn of {@code <tool_response>} blocks; a user message that is itself a tool response does not count
 *       as the last query;</li>
 *   <li>the generation prompt {@code <|im_start|>assistant\n}, followed by an empty think block when the
 *       template argument {@code enable_thinking} is false.</li>
 * </ul>
 */
final class Qwen3ChatTemplate implements ChatTemplate {
    static final Qwen3ChatTemplate INSTANCE = new Qwen3ChatTemplate();

    private static final String START = Qwen25ChatTemplate.START;
    private static final String END = Qwen25ChatTemplate.END;

    private Qwen3ChatTemplate() {
    }

    @Override
    public String endOfTurn() {
        return END;
    }

    @Override
    public String render(List<ChatMessage> messages, List<JsonNode> tools, boolean addGenerationPrompt) {
        return render(messages, tools, addGenerationPrompt, Map.of());
    }

    @Override
    public String render(List<ChatMessage> messages, List<JsonNode> tools, boolean addGenerationPrompt,
                         Map<String, JsonNode> templateArguments) {
        if (messages.isEmpty()) {
            // The Jinja template reads messages[0] unconditionally and fails on an empty list.
            throw new QlabException("chat template: the conversation has no messages");
        }
        StringBuilder out = new StringBuilder();
        ChatMessage first = messages.get(0);
        boolean systemFirst = first.role().equals("system");
        if (tools != null && !tools.isEmpty()) {
            out.append(START).append("system\n");
            if (systemFirst) {
                out.append(first.content()).append("\n\n");
            }
            out.append(Qwen25ChatTemplate.TOOLS_HEADER, 2, Qwen25ChatTemplate.TOOLS_HEADER.length());
            for (JsonNode tool : tools) {
                out.append('\n').append(PythonJson.dumps(tool));
            }
            out.append(Qwen25ChatTemplate.TOOLS_FOOTER).append(END).append('\n');
        } else if (systemFirst) {
            out.append(START).append("system\n").append(first.content()).append(END).append('\n');
        }

        int lastQuery = lastQueryIndex(messages);
        for (int i = 0; i < messages.size(); i++) {
            ChatMessage m = messages.get(i);
            String role = m.role();
            boolean last = i == messages.size() - 1;
            if (role.equals("user") || (role.equals("system") && i > 0)) {
                out.append(START).append(role).append('\n').append(m.content()).append(END).append('\n');
            } else if (role.equals("assistant")) {
                appendAssistant(m, i > lastQuery, last, out);
            } else if (role.equals("tool")) {
                if (i == 0 || !messages.get(i - 1).role().equals("tool")) {
                    out.append(START).append("user");
                }
                out.append("\n<tool_response>\n").append(m.content()).append("\n</tool_response>");
                if (last || !messages.get(i + 1).role().equals("tool")) {
                    out.append(END).append('\n');
                }
            }
        }
        if (addGenerationPrompt) {
            out.append(START).append("assistant\n");
            JsonNode thinking = templateArguments.get("enable_thinking");
            if (thinking != null && thinking.isBoolean() && !thinking.booleanValue()) {
                out.append("<think>\n\n</think>\n\n");
            }
        }
        return out.toString();
    }

    /** The index of the last user message that is not a wrapped tool response (the last index when none is). */
    private static int lastQueryIndex(List<ChatMessage> messages) {
        for (int i = messages.size() - 1; i >= 0; i--) {
            ChatMessage m = messages.get(i);
            if (m.role().equals("user")
                    && !(m.content().startsWith("<tool_response>") && m.content().endsWith("</tool_response>"))) {
                return i;
            }
        }
        return messages.size() - 1;
    }

    private static void appendAssistant(ChatMessage m, boolean afterLastQuery, boolean last, StringBuilder out) {
        // A missing content (tool calls only) is taken as empty; the Jinja template would fail on it.
        String content = m.content() == null ? "" : m.content();
        String reasoning = "";
        int close = content.indexOf("</think>");
        if (close >= 0) {
            String beforeFirstClose = content.substring(0, close);
            String afterLastClose = content.substring(content.lastIndexOf("</think>") + "</think>".length());
            String r = PythonText.rstrip(beforeFirstClose, '\n');
            reasoning = PythonText.lstrip(r.substring(r.lastIndexOf("<think>") < 0 ? 0
                    : r.lastIndexOf("<think>") + "<think>".length()), '\n');
            content = PythonText.lstrip(afterLastClose, '\n');
        }
        out.append(START).append("assistant\n");
        if (afterLastQuery && (last || !reasoning.isEmpty())) {
            out.append("<think>\n").append(PythonText.strip(reasoning, '\n')).append("\n</think>\n\n")
                    .append(PythonText.lstrip(content, '\n'));
        } else {
            out.append(content);
        }
        List<ChatMessage.ToolCall> calls = m.toolCalls();
        for (int j = 0; j < calls.size(); j++) {
            if (j > 0 || !content.isEmpty()) {
                out.append('\n');
            }
            ChatMessage.ToolCall call = calls.get(j);
            JsonNode arguments = call.arguments();
            out.append("<tool_call>\n{\"name\": \"").append(call.name()).append("\", \"arguments\": ")
                    .append(arguments.isTextual() ? arguments.textValue() : PythonJson.dumps(arguments))
                    .append("}\n</tool_call>");
        }
        out.append(END).append('\n');
    }
}
