package qlab.engine.testing;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Assumptions;

/** The llama.cpp fixtures (../shared/fixtures/ggml, see its README): skipped, loudly, only when absent. */
public final class GgmlFixtures {

    private GgmlFixtures() {}

    public static Path dir() {
        Path dir = Fixtures.root().resolve("ggml");
        if (!Files.isDirectory(dir)) {
            String msg = "SKIPPED: llama.cpp fixtures not found at " + dir;
            System.err.println("*** " + msg);
            Assumptions.abort(msg);
        }
        return dir;
    }

    public static Path model(String name) {
        return dir().resolve("models").resolve(name);
    }

    /** The checkout's root (for datasets/), as the build passes it. */
    public static Path home() {
        return Path.of(System.getProperty("qlab.home", "..")).toAbsolutePath().normalize();
    }
}
