package qlab.engine.chat;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;

/** Turns a conversation into the prompt text a chat model was trained on. */
public interface ChatTemplate {

    /**
     * The prompt text, exactly as transformers' {@code apply_chat_template(messages, tools=tools,
     * add_generation_prompt=addGenerationPrompt, tokenize=False)} renders it with the model's template.
     *
     * @param tools tool (function) definitions as JSON objects, or {@code null}/empty for none
     */
    String render(List<ChatMessage> messages, List<JsonNode> tools, boolean addGenerationPrompt);

    /** The text that closes a turn; the model ends its reply by generating it. */
    String endOfTurn();

    /** The ChatML template of Qwen2.5-Instruct models. */
    static ChatTemplate qwen25() {
        return Qwen25ChatTemplate.INSTANCE;
    }
}
