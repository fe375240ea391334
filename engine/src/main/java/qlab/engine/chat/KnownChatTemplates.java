package qlab.engine.chat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Function;
import qlab.engine.QlabException;

/**
 * The chat templates qlab renders, and how a model's Jinja template is recognised as one of them: by passages
 * of the template text that carry the behaviour the Java rendering reproduces (a template that shares the
 * markers but differs elsewhere would render differently, so the markers are the distinctive statements,
 * not just the special tokens). A template that matches none is refused with a one-line error: rendering it
 * approximately would silently change the prompt.
 */
final class KnownChatTemplates {
    static final String TOKENIZER_CONFIG = "tokenizer_config.json";
    static final String TEMPLATE_FILE = "chat_template.jinja";

    /** A known template: its name, the passages that identify it, and how to build it from tokenizer_config. */
    private record Known(String name, String id, List<String> markers, List<String> absent, Function<JsonNode, ChatTemplate> build) {
        boolean matches(String template) {
            return markers.stream().allMatch(template::contains) && absent.stream().noneMatch(template::contains);
        }
    }

    private static final List<Known> KNOWN = List.of(
            new Known("Qwen3", "qwen3", List.of("<|im_start|>", "ns.last_query_index", "reasoning_content",
                    "enable_thinking is defined and enable_thinking is false",
                    "message.content.split('</think>')[-1].lstrip('\\n')", "<tool_response>"),
                    List.of(), config -> ChatTemplate.qwen3()),
            new Known("Qwen2.5", "qwen2.5", List.of("<|im_start|>", Qwen25ChatTemplate.DEFAULT_SYSTEM_PROMPT, "<tool_call>",
                    "<tool_response>"),
                    List.of("<think>"), config -> ChatTemplate.qwen25()),
            new Known("Llama 3", "llama3", List.of("<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim + '<|eot_id|>'",
                    "{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}",
                    "{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}"),
                    List.of("tools", "add_generation_prompt"),
                    config -> ChatTemplate.llama3(specialToken(config, "bos_token"))));

    private static final ObjectMapper JSON = new ObjectMapper();

    private KnownChatTemplates() {
    }

    /** The known template called {@code id} ({@code qwen2.5}, {@code qwen3}, {@code llama3}), with the model's special tokens. */
    static ChatTemplate named(String id, Path modelDirectory) {
        for (Known k : KNOWN) {
            if (k.id.equals(id)) {
                return k.build.apply(tokenizerConfig(modelDirectory.resolve(TOKENIZER_CONFIG)));
            }
        }
        throw new QlabException("chat template \"" + id + "\" is unknown (known: "
                + String.join(", ", KNOWN.stream().map(Known::id).toList()) + ")");
    }

    private static JsonNode tokenizerConfig(Path configFile) {
        if (!Files.isRegularFile(configFile)) {
            return JSON.createObjectNode();
        }
        try {
            return JSON.readTree(configFile.toFile());
        } catch (IOException e) {
            throw new QlabException(configFile + ": cannot read: " + e.getMessage().lines().findFirst().orElse(""), e);
        }
    }

    static ChatTemplate forModel(Path modelDirectory) {
        Path configFile = modelDirectory.resolve(TOKENIZER_CONFIG);
        JsonNode config = tokenizerConfig(configFile);
        Path templateFile = modelDirectory.resolve(TEMPLATE_FILE);
        if (Files.isRegularFile(templateFile)) {
            try {
                return recognise(Files.readString(templateFile, StandardCharsets.UTF_8), templateFile.toString(), config);
            } catch (IOException e) {
                throw new QlabException(templateFile + ": cannot read: " + e.getMessage(), e);
            }
        }
        JsonNode template = config.get("chat_template");
        if (template == null || template.isNull()) {
            throw new QlabException(configFile + ": field \"chat_template\" is missing (the model has no chat template;"
                    + " --template qwen2.5|qwen3|llama3 picks one)");
        }
        return recognise(templateText(template, configFile), configFile + ": field \"chat_template\"", config);
    }

    /** The template string: the value itself, or the one named "default" in a list of named templates. */
    private static String templateText(JsonNode template, Path configFile) {
        if (template.isTextual()) {
            return template.textValue();
        }
        if (template.isArray()) {
            for (JsonNode named : template) {
                if (named.path("name").asText().equals("default") && named.path("template").isTextual()) {
                    return named.get("template").textValue();
                }
            }
        }
        throw new QlabException(configFile + ": field \"chat_template\" must be a string or a list with a template"
                + " named \"default\"");
    }

    /**
     * The known template that {@code template} is, built with the special tokens of {@code tokenizerConfig}.
     *
     * @param source names the template in the error message (file and field)
     */
    static ChatTemplate recognise(String template, String source, JsonNode tokenizerConfig) {
        for (Known k : KNOWN) {
            if (k.matches(template)) {
                return k.build.apply(tokenizerConfig);
            }
        }
        throw new QlabException(source + " is not a chat template qlab knows (known: "
                + String.join(", ", KNOWN.stream().map(Known::name).toList()) + ")");
    }

    /**
     * A special token of tokenizer_config.json, written as a string or as {"content": ...}; an absent one is
     * empty, as Jinja prints an undefined variable.
     */
    private static String specialToken(JsonNode config, String name) {
        JsonNode v = config.get(name);
        if (v == null || v.isNull()) {
            return "";
        }
        return v.isTextual() ? v.textValue() : v.path("content").asText("");
    }
}
