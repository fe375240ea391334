package qlab.engine.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Assumptions;

/**
 * The golden outputs in ../shared/fixtures (made by reference implementations we did not
 * write). Tests that need them are skipped, loudly, only when the directory is absent.
 */
public final class Fixtures {

    private Fixtures() {}

    public static Path root() {
        String p = System.getProperty("qlab.fixtures", "../shared/fixtures");
        return Path.of(p).toAbsolutePath().normalize();
    }

    /** The oracle directory, or the test is skipped with a message saying why. */
    public static Path oracle() {
        Path dir = root().resolve("oracle");
        if (!Files.isDirectory(dir)) {
            String msg = "SKIPPED: golden fixtures not found at " + dir + " (expected ../shared beside the checkout)";
            System.err.println("*** " + msg);
            Assumptions.abort(msg);
        }
        return dir;
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
