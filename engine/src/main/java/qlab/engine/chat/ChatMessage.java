package qlab.engine.chat;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import qlab.engine.QlabException;

/**
 * One message of a conversation, in the shape chat templates receive from transformers'
 * {@code apply_chat_template}.
 *
 * @param role      "system", "user", "assistant" or "tool" (templates skip roles they do not know)
 * @param content   the text; {@code null} only for an assistant message that carries tool calls
 * @param toolCalls the assistant's function calls, empty for every other message
 */
public record ChatMessage(String role, String content, List<ToolCall> toolCalls) {

    /** A function call made by the assistant; {@code arguments} is any JSON value (usually an object). */
    public record ToolCall(String name, JsonNode arguments) {
        public ToolCall {
            if (name == null || arguments == null) {
                throw new IllegalArgumentException("tool call needs a name and arguments");
            }
        }
    }

    public ChatMessage {
        if (role == null) {
            throw new IllegalArgumentException("message role is null");
        }
        toolCalls = List.copyOf(toolCalls);
        if (content == null && !("assistant".equals(role) && !toolCalls.isEmpty())) {
            throw new IllegalArgumentException("a " + role + " message needs content");
        }
    }

    public static ChatMessage system(String content) {
        return new ChatMessage("system", content, List.of());
    }

    public static ChatMessage user(String content) {
        return new ChatMessage("user", content, List.of());
    }

    public static ChatMessage assistant(String content) {
        return new ChatMessage("assistant", content, List.of());
    }

    public static ChatMessage assistant(String content, List<ToolCall> toolCalls) {
        return new ChatMessage("assistant", content, toolCalls);
    }

    /** The result of a tool call, fed back to the model. */
    public static ChatMessage tool(String content) {
        return new ChatMessage("tool", content, List.of());
    }

    /**
     * Messages from the JSON that {@code apply_chat_template} takes: an array of objects with {@code role},
     * {@code content} (string, or null/absent for an assistant message with {@code tool_calls}) and optional
     * {@code tool_calls} ({@code {"function": {"name", "arguments"}}} or {@code {"name", "arguments"}}).
     *
     * @param source names the input in error messages, e.g. a file name
     */
    public static List<ChatMessage> listFromJson(JsonNode messages, String source) {
        if (messages == null || !messages.isArray()) {
            throw new QlabException(source + ": expected a JSON array of messages");
        }
        List<ChatMessage> result = new ArrayList<>();
        for (int i = 0; i < messages.size(); i++) {
            result.add(fromJson(messages.get(i), source + ": message " + i));
        }
        return result;
    }

    private static ChatMessage fromJson(JsonNode message, String where) {
        if (!message.isObject()) {
            throw new QlabException(where + ": expected an object with \"role\" and \"content\"");
        }
        JsonNode role = message.get("role");
        if (role == null || !role.isTextual()) {
            throw new QlabException(where + ": field \"role\" must be a string");
        }
        JsonNode content = message.get("content");
        if (content != null && !content.isNull() && !content.isTextual()) {
            throw new QlabException(where + ": field \"content\" must be a string, got " + content.getNodeType()
                    .toString().toLowerCase(java.util.Locale.ROOT));
        }
        List<ToolCall> calls = new ArrayList<>();
        JsonNode toolCalls = message.get("tool_calls");
        if (toolCalls != null && !toolCalls.isNull()) {
            if (!toolCalls.isArray()) {
                throw new QlabException(where + ": field \"tool_calls\" must be an array");
            }
            for (int j = 0; j < toolCalls.size(); j++) {
                calls.add(toolCallFromJson(toolCalls.get(j), where + ": tool_calls[" + j + "]"));
            }
        }
        String text = content == null || content.isNull() ? null : content.textValue();
        if (text == null && !("assistant".equals(role.textValue()) && !calls.isEmpty())) {
            throw new QlabException(where + ": field \"content\" is missing (only an assistant message with"
                    + " tool_calls may omit it)");
        }
        return new ChatMessage(role.textValue(), text, calls);
    }

    private static ToolCall toolCallFromJson(JsonNode call, String where) {
        // As the template: a "function" member, when present, holds the call.
        JsonNode function = call.isObject() && call.has("function") ? call.get("function") : call;
        if (!function.isObject()) {
            throw new QlabException(where + ": expected an object with \"name\" and \"arguments\"");
        }
        JsonNode name = function.get("name");
        if (name == null || !name.isTextual()) {
            throw new QlabException(where + ": field \"name\" must be a string");
        }
        JsonNode arguments = function.get("arguments");
        if (arguments == null) {
            throw new QlabException(where + ": field \"arguments\" is missing");
        }
        return new ToolCall(name.textValue(), arguments);
    }
}
