package qlab.engine.chat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/** Turns a conversation into the prompt text a chat model was trained on. */
public interface ChatTemplate {

    /**
     * The prompt text, exactly as transformers' {@code apply_chat_template(messages, tools=tools,
     * add_generation_prompt=addGenerationPrompt, tokenize=False)} renders it with the model's template.
     *
     * @param tools tool (function) definitions as JSON objects, or {@code null}/empty for none
     */
    String render(List<ChatMessage> messages, List<JsonNode> tools, boolean addGenerationPrompt);

    /**
     * The same with extra template arguments (transformers' {@code **kwargs}, e.g. Qwen3's
     * {@code enable_thinking}); a template ignores the arguments it does not use.
     */
    default String render(List<ChatMessage> messages, List<JsonNode> tools, boolean addGenerationPrompt,
                          Map<String, JsonNode> templateArguments) {
        return render(messages, tools, addGenerationPrompt);
    }

    /** The text that closes a turn; the model ends its reply by generating it. */
    String endOfTurn();

    /** The ChatML template of Qwen2.5-Instruct models. */
    static ChatTemplate qwen25() {
        return Qwen25ChatTemplate.INSTANCE;
    }

    /** The template of Qwen3 models (thinking and tool calling). */
    static ChatTemplate qwen3() {
        return Qwen3ChatTemplate.INSTANCE;
    }

    /** The template of Llama 3 Instruct models, with the tokenizer's {@code bos_token} in front. */
    static ChatTemplate llama3(String bosToken) {
        return new Llama3ChatTemplate(bosToken);
    }

    /**
     * The template of the model in {@code modelDirectory}, recognised from the {@code chat_template} of its
     * {@code chat_template.jinja} or {@code tokenizer_config.json} ({@link KnownChatTemplates}).
     *
     * @throws qlab.engine.QlabException when the model has no template or one that qlab does not know
     */
    static ChatTemplate forModel(Path modelDirectory) {
        return KnownChatTemplates.forModel(modelDirectory);
    }

    /**
     * A known template by name ({@code qwen2.5}, {@code qwen3}, {@code llama3}), whatever the model's own, with
     * the special tokens of the model's {@code tokenizer_config.json}.
     *
     * @throws qlab.engine.QlabException for an unknown name
     */
    /**
     * A template given as its Jinja text (a GGUF's {@code tokenizer.chat_template}), recognised as
     * {@link #forModel} recognises a tokenizer_config.json's; {@code specialTokens} maps
     * {@code bos_token}/{@code eos_token} to their text.
     *
     * @throws qlab.engine.QlabException naming {@code source} when the text is no template qlab knows
     */
    static ChatTemplate recognise(String template, String source, java.util.Map<String, String> specialTokens) {
        com.fasterxml.jackson.databind.node.ObjectNode config =
                com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode();
        specialTokens.forEach(config::put);
        return KnownChatTemplates.recognise(template, source, config);
    }

    static ChatTemplate named(String name, Path modelDirectory) {
        return KnownChatTemplates.named(name, modelDirectory);
    }
}
