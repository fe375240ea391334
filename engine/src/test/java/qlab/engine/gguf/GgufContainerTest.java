package qlab.engine.gguf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import qlab.engine.QlabException;

/** The container alone: every metadata value type written and read back, version 2, alignment. */
class GgufContainerTest {

    @Test
    void everyValueTypeAndNestedArraysReadBackAsWritten(@TempDir Path dir) throws Exception {
        Map<String, GgufValue> m = new LinkedHashMap<>();
        m.put("u8", GgufValue.of(GgufValueType.UINT8, 255L));
        m.put("i8", GgufValue.of(GgufValueType.INT8, -128L));
        m.put("u16", GgufValue.of(GgufValueType.UINT16, 65535L));
        m.put("i16", GgufValue.of(GgufValueType.INT16, -32768L));
        m.put("u32", GgufValue.of(GgufValueType.UINT32, 4294967295L));
        m.put("i32", GgufValue.of(GgufValueType.INT32, -2147483648L));
        m.put("u64", GgufValue.of(GgufValueType.UINT64, -1L));
        m.put("i64", GgufValue.of(GgufValueType.INT64, Long.MIN_VALUE));
        m.put("f32", GgufValue.f32(0.1));
        m.put("f64", GgufValue.of(GgufValueType.FLOAT64, 0.1));
        m.put("bool", GgufValue.of(GgufValueType.BOOL, true));
        m.put("string", GgufValue.string("ü\n€"));
        m.put("strings", GgufValue.array(GgufValueType.STRING, List.of("a", "", "ü")));
        m.put("floats", GgufValue.array(GgufValueType.FLOAT32, List.of(1.5, -2.0)));
        m.put("nested", GgufValue.array(GgufValueType.ARRAY, List.of(
                GgufValue.array(GgufValueType.INT32, List.of(1L, 2L)), GgufValue.array(GgufValueType.BOOL, List.of(false)))));
        Path p = dir.resolve("all.gguf");
        GgufWriter w = new GgufWriter(64);
        m.forEach(w::put);
        w.tensor("x", new long[] {3, 2}, GgufTensorType.F32, 24, () -> GgufWriter.f32(new float[] {1, 2, 3, 4, 5, 6}));
        w.tensor("y", new long[] {5}, GgufTensorType.F16, 10, () -> MemorySegment.ofArray(new byte[10]));
        w.write(p);
        GgufFile f = GgufFile.open(p, GgufTensorType.FLOATS);
        assertEquals(64, f.alignment());
        m.forEach((k, v) -> assertEquals(v, f.metadata().get(k), k));
        assertEquals(0, f.tensor("y").offset() % 64);
        assertArrayEquals(new long[] {2, 3}, f.tensor("x").shape());
        assertArrayEquals(new float[] {1, 2, 3, 4, 5, 6}, f.floats("x"));
        assertEquals(List.of("a", "", "ü"), f.strings("strings"));
        assertThrows(QlabException.class, () -> f.string("u8"));
        assertTrue(assertThrows(QlabException.class, () -> f.integer("missing")).getMessage().contains("\"missing\""));

        byte[] v2 = Files.readAllBytes(p);
        ByteBuffer.wrap(v2).order(ByteOrder.LITTLE_ENDIAN).putInt(4, 2);
        GgufFile two = GgufFile.read("v2.gguf", MemorySegment.ofArray(v2), GgufTensorType.FLOATS);
        assertEquals(2, two.version());
        assertEquals(f.metadata(), two.metadata());
    }
}
