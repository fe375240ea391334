package qlab.engine.chat;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;

/**
 * The Llama 3 Instruct chat template, written out in Java. It renders what the Jinja template in the model's
 * {@code tokenizer_config.json} renders under transformers:
 * <ul>
 *   <li>the {@code bos_token} first, then every message, whatever its role, as
 *       {@code <|start_header_id|>role<|end_header_id|>\n\n} + the content with surrounding whitespace removed
 *       (Python's {@code str.strip}) + {@code <|eot_id|>};</li>
 *   <li>always, whether or not a generation prompt is asked for, the assistant header
 *       {@code <|start_header_id|>assistant<|end_header_id|>\n\n} at the end;</li>
 *   <li>tools and tool calls are not part of this template and are left out.</li>
 * </ul>
 */
final class Llama3ChatTemplate implements ChatTemplate {
    private static final String END = "<|eot_id|>";

    private final String bosToken;

    /** @param bosToken the tokenizer_config's {@code bos_token} */
    Llama3ChatTemplate(String bosToken) {
        this.bosToken = bosToken;
    }

    @Override
    public String endOfTurn() {
        return END;
    }

    @Override
    public String render(List<ChatMessage> messages, List<JsonNode> tools, boolean addGenerationPrompt) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < messages.size(); i++) {
            ChatMessage m = messages.get(i);
            if (i == 0) {
                out.append(bosToken);
            }
            // Jinja's trim of a missing content (an assistant turn with only tool calls) prints Python's None.
            String content = m.content() == null ? "None" : PythonText.strip(m.content());
            out.append("<|start_header_id|>").append(m.role()).append("<|end_header_id|>\n\n")
                    .append(content).append(END);
        }
        out.append("<|start_header_id|>assistant<|end_header_id|>\n\n");
        return out.toString();
    }
}
