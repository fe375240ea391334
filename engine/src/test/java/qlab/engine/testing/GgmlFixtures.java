package qlab.engine.testing;

import java.nio.file.Path;

/** The llama.cpp fixtures (../shared/fixtures/ggml, see its README): required like the oracle's ({@link Fixtures}). */
public final class GgmlFixtures {

    private GgmlFixtures() {}

    public static Path dir() {
        return Fixtures.ggml();
    }

    public static Path model(String name) {
        return dir().resolve("models").resolve(name);
    }

    /** The checkout's root (for datasets/), as the build passes it. */
    public static Path home() {
        return Path.of(System.getProperty("qlab.home", "..")).toAbsolutePath().normalize();
    }
}
