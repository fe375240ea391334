package qlab.quant.ggml;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import qlab.engine.testing.Fixtures;

/**
 * ggml's quant-vectors fixtures (../shared/fixtures/ggml/quant-vectors): rows of floats, an
 * importance vector, and per type what llama.cpp's quantizer and {@code to_float} gave for them.
 */
final class QuantVectors {
    private QuantVectors() {
    }

    /** One set of rows and, for one type, its golden outputs (plain or with importance). */
    record Golden(String set, String type, int rows, int cols, int rowBytes, float[] input, float[] importance,
                  byte[] quantized, float[] dequantized) {
        float[] row(int r) {
            return java.util.Arrays.copyOfRange(input, r * cols, (r + 1) * cols);
        }
    }

    static Path dir() {
        Path dir = Fixtures.root().resolve("ggml/quant-vectors");
        if (!Files.isDirectory(dir)) {
            String msg = "SKIPPED: ggml quant-vector fixtures not found at " + dir;
            System.err.println("*** " + msg);
            Assumptions.abort(msg);
        }
        return dir;
    }

    /** Every set's golden outputs for {@code type} (e.g. "Q4_0"), with importance or without. */
    static List<Golden> of(String type, boolean withImportance) {
        Path dir = dir();
        JsonNode manifest = Fixtures.json(dir.resolve("manifest.json"));
        List<Golden> out = new ArrayList<>();
        for (JsonNode set : manifest.get("sets")) {
            JsonNode o = set.get("outputs").get(type);
            JsonNode files = o.get(withImportance ? "imatrix" : "plain");
            out.add(new Golden(set.get("id").asText(), type, set.get("rows").asInt(), set.get("cols").asInt(),
                    o.get("row_bytes").asInt(), Fixtures.f32(dir.resolve(set.get("input").get("file").asText())),
                    withImportance ? Fixtures.f32(dir.resolve(set.get("importance").get("file").asText())) : null,
                    bytes(dir.resolve(files.get("quantized").get("file").asText())),
                    Fixtures.f32(dir.resolve(files.get("dequantized").get("file").asText()))));
        }
        return out;
    }

    private static byte[] bytes(Path file) {
        try {
            return Files.readAllBytes(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
