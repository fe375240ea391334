package qlab.engine.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * The golden outputs in ../shared/fixtures (made by reference implementations we did not
 * write). They are required: a test that needs them fails, naming the path, when they are absent,
 * so the oracle tests cannot vanish from a green build. {@code -Dqlab.fixtures.optional=true}
 * skips such tests instead, loudly, for a build without ../shared; the build itself checks the
 * directory up front under the same rule (the enforcer execution "fixtures-present" in the parent POM).
 */
public final class Fixtures {

    /** {@code -Dqlab.fixtures.optional=true}: skip the oracle tests when the fixtures are absent. */
    public static final String OPTIONAL_PROPERTY = "qlab.fixtures.optional";

    private Fixtures() {}

    public static Path root() {
        String p = System.getProperty("qlab.fixtures", "../shared/fixtures");
        return Path.of(p).toAbsolutePath().normalize();
    }

    /** The oracle directory; absent, the test fails naming it (or is skipped, with the flag). */
    public static Path oracle() {
        return oracle(root(), Boolean.getBoolean(OPTIONAL_PROPERTY));
    }

    /** A file or directory under the oracle directory, which must exist like the directory itself. */
    public static Path oracle(String first, String... more) {
        return require(oracle().resolve(Path.of(first, more)), Boolean.getBoolean(OPTIONAL_PROPERTY));
    }

    /** The llama.cpp (ggml) fixtures' directory, required like the oracle's. */
    public static Path ggml() {
        return require(root().resolve("ggml"), Boolean.getBoolean(OPTIONAL_PROPERTY));
    }

    /** A file or directory under the llama.cpp (ggml) fixtures, required like the oracle's. */
    public static Path ggml(String first, String... more) {
        return require(ggml().resolve(Path.of(first, more)), Boolean.getBoolean(OPTIONAL_PROPERTY));
    }

    static Path oracle(Path root, boolean optional) {
        return require(root.resolve("oracle"), optional);
    }

    private static Path require(Path path, boolean optional) {
        if (Files.exists(path)) {
            return path;
        }
        if (optional) {
            String msg = "SKIPPED (-D" + OPTIONAL_PROPERTY + "=true): golden fixtures not found at " + path;
            System.err.println("*** " + msg);
            Assumptions.abort(msg);
        }
        return Assertions.fail("golden fixtures not found at " + path + " (put ../shared beside the checkout, "
                + "or -Dqlab.fixtures=DIR; -D" + OPTIONAL_PROPERTY + "=true skips the oracle tests)");
    }

    public static JsonNode json(Path file) {
        try {
            return new ObjectMapper().readTree(file.toFile());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static float[] f32(Path file) {
        ByteBuffer b = bytes(file);
        float[] out = new float[b.remaining() / 4];
        b.asFloatBuffer().get(out);
        return out;
    }

    public static double[] f64(Path file) {
        ByteBuffer b = bytes(file);
        double[] out = new double[b.remaining() / 8];
        b.asDoubleBuffer().get(out);
        return out;
    }

    private static ByteBuffer bytes(Path file) {
        try {
            return ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.LITTLE_ENDIAN);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static int[] ints(JsonNode array) {
        int[] out = new int[array.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = array.get(i).intValue();
        }
        return out;
    }
}
