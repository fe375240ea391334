package qlab.cli;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import qlab.engine.QlabException;
import qlab.engine.chat.ChatTemplate;
import qlab.engine.gguf.GgufFile;
import qlab.quant.checkpoint.GgufCheckpoint;

/** The chat template for a command: the one named by --template, else the model's own. */
final class ChatTemplates {

    private ChatTemplates() {}

    static ChatTemplate choose(Path model, String templateName) {
        if (templateName == null && GgufCheckpoint.isGguf(model)) {
            return fromGguf(model);
        }
        Path dir = TextTokens.directory(model);
        return templateName == null ? ChatTemplate.forModel(dir) : ChatTemplate.named(templateName, dir);
    }

    /** A GGUF's own template (tokenizer.chat_template), its special tokens from tokenizer.ggml.*. */
    private static ChatTemplate fromGguf(Path model) {
        GgufFile f = GgufCheckpoint.open(model);
        String key = "tokenizer.chat_template";
        if (!f.has(key)) {
            throw new QlabException(model + ": field \"" + key + "\" is missing; name a template with --template");
        }
        Map<String, String> special = new LinkedHashMap<>();
        List<String> tokens = f.has("tokenizer.ggml.tokens") ? f.strings("tokenizer.ggml.tokens") : List.of();
        for (String name : new String[] {"bos", "eos"}) {
            String id = "tokenizer.ggml." + name + "_token_id";
            if (f.has(id) && f.integer(id) >= 0 && f.integer(id) < tokens.size()) {
                special.put(name + "_token", tokens.get((int) f.integer(id)));
            }
        }
        return ChatTemplate.recognise(f.string(key), model + ": field \"" + key + "\"", special);
    }
}
