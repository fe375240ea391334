package qlab.cli;

import java.nio.file.Path;
import qlab.engine.model.Model;

/** Opens whatever a --model argument names. */
final class Models {

    private Models() {}

    static Model open(Path path) {
        return Model.load(path);
    }
}
