package qlab.quant;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import qlab.engine.testing.Fixtures;

/**
 * llama.cpp's own quantizer outputs (../shared/fixtures/ggml/quant-vectors, made by
 * ggml_quantize_chunk and to_float at llama.cpp 81ff7abe): every row of both sets, plain and with
 * the importance vector, must quantize to the same bytes, and the stored bytes must dequantize to
 * the same float bits (NaN compared as NaN), for each format that stores a ggml type's blocks.
 */
class GgmlQuantVectorsTest {

    private static Path dir() {
        Path d = Fixtures.root().resolve("ggml/quant-vectors");
        if (!Files.isDirectory(d)) {
            String msg = "SKIPPED: ggml fixtures not found at " + d;
            System.err.println("*** " + msg);
            Assumptions.abort(msg);
        }
        return d;
    }

    static Stream<Arguments> cases() {
        List<Arguments> out = new ArrayList<>();
        for (String format : new String[] {"q4_k", "q5_k", "q6_k", "q2_k", "q3_k", "iq4_nl", "iq4_xs"}) {
            for (String set : new String[] {"a", "b"}) {
                out.add(Arguments.of(format, set, false));
                out.add(Arguments.of(format, set, true));
            }
        }
        return out.stream();
    }

    private static byte[] bytes(Path p) {
        try {
            return Files.readAllBytes(p);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @ParameterizedTest(name = "{0} set {1} importance {2}")
    @MethodSource("cases")
    void bytesAndDequantizedValuesEqualLlamaCpp(String name, String setId, boolean withImportance) {
        Path root = dir();
        JsonNode manifest = Fixtures.json(root.resolve("manifest.json"));
        JsonNode set = null;
        for (JsonNode s : manifest.get("sets")) {
            if (s.get("id").asText().equals(setId)) {
                set = s;
            }
        }
        QuantFormat format = Formats.byName(name);
        String type = format.ggml().orElseThrow().type().name();
        int rows = set.get("rows").asInt();
        int cols = set.get("cols").asInt();
        float[] input = Fixtures.f32(root.resolve(set.get("input").get("file").asText()));
        float[] importance = withImportance ? Fixtures.f32(root.resolve(set.get("importance").get("file").asText())) : null;
        JsonNode files = set.get("outputs").get(type).get(withImportance ? "imatrix" : "plain");
        byte[] expected = bytes(root.resolve(files.get("quantized").get("file").asText()));
        float[] expectedValues = Fixtures.f32(root.resolve(files.get("dequantized").get("file").asText()));
        int rowBytes = (int) format.bytesPerRow(cols);
        assertEquals(expected.length, rows * rowBytes, type + " row bytes");

        MemorySegment stored = MemorySegment.ofArray(expected);
        MemorySegment mine = Arena.ofAuto().allocate(rowBytes);
        float[] values = new float[cols];
        List<Integer> byteRows = new ArrayList<>();
        List<Integer> valueRows = new ArrayList<>();
        for (int r = 0; r < rows; r++) {
            format.quantizeRow(input, r * cols, cols, importance, mine, 0);
            byte[] got = mine.toArray(ValueLayout.JAVA_BYTE);
            for (int i = 0; i < rowBytes; i++) {
                if (got[i] != expected[r * rowBytes + i]) {
                    byteRows.add(r);
                    break;
                }
            }
            format.dequantizeRow(stored, (long) r * rowBytes, cols, values, 0);
            for (int j = 0; j < cols; j++) {
                float e = expectedValues[r * cols + j];
                boolean same = Float.isNaN(e) ? Float.isNaN(values[j])
                        : Float.floatToRawIntBits(e) == Float.floatToRawIntBits(values[j]);
                if (!same) {
                    valueRows.add(r);
                    break;
                }
            }
        }
        String where = name + " set " + setId + (withImportance ? " with importance" : " plain");
        assertTrue(byteRows.isEmpty(), where + ": rows whose bytes differ from llama.cpp's: " + byteRows);
        assertTrue(valueRows.isEmpty(), where + ": rows whose dequantized values differ: " + valueRows);
    }
}
