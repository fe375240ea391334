package qlab.cli;

import java.nio.file.Path;
import qlab.engine.chat.ChatTemplate;

/** The chat template for a command: the one named by --template, else the model's own. */
final class ChatTemplates {

    private ChatTemplates() {}

    static ChatTemplate choose(Path model, String templateName) {
        Path dir = TextTokens.directory(model);
        return templateName == null ? ChatTemplate.forModel(dir) : ChatTemplate.named(templateName, dir);
    }
}
