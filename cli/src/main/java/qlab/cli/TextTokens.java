package qlab.cli;

import java.nio.file.Path;
import qlab.engine.QlabException;

/** Text to token ids with the tokenizer that belongs to a model. */
final class TextTokens {

    private TextTokens() {}

    static int[] encode(Path model, String text) {
        throw new QlabException(model + ": --text needs the model's tokenizer.json; use --ids FILE");
    }
}
