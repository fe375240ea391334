package qlab.engine.safetensors;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import qlab.engine.QlabException;
import qlab.engine.model.Model;
import qlab.engine.model.ModelConfig;
import qlab.engine.model.ModelManifest;
import qlab.engine.synthetic.SyntheticCheckpoint;
import qlab.engine.testing.TestModels;

class SafetensorsTest {

    @TempDir
    Path tmp;

    /** A file with this exact header text and data section. */
    private Path raw(String name, String header, int dataBytes) throws IOException {
        byte[] h = header.getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(8 + h.length + dataBytes).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(h.length).put(h);
        Path p = tmp.resolve(name);
        Files.write(p, b.array());
        return p;
    }

    private String error(Path p) {
        return assertThrows(QlabException.class, () -> SafetensorsFile.open(p)).getMessage();
    }

    @Test
    void writesAndReadsEveryFloatDtypeExactly() {
        float[] v = {0f, -0f, 1f, -2.5f, 3.1415927f, 65504f, 6.0e-8f, 1.0e-5f, -7.3e-6f, 1e30f, Float.MIN_NORMAL};
        Path p = tmp.resolve("t.safetensors");
        new SafetensorsWriter().metadata("format", "pt")
                .addFloats("a.f32", DType.F32, new long[] {v.length}, v)
                .addFloats("b.f16", DType.F16, new long[] {v.length}, v)
                .addFloats("c.bf16", DType.BF16, new long[] {v.length}, v)
                .write(p);
        SafetensorsFile f = SafetensorsFile.open(p);
        assertEquals("pt", f.metadata().get("format"));
        assertEquals((8 + f.headerBytes()) % 8, 0, "header padded to 8 bytes");
        assertArrayEquals(v, f.floats("a.f32"));
        float[] h = f.floats("b.f16");
        float[] b = f.floats("c.bf16");
        for (int i = 0; i < v.length; i++) {
            assertEquals(Float.float16ToFloat(Float.floatToFloat16(v[i])), h[i]);
            assertEquals(Float.intBitsToFloat((SafetensorsWriter.toBf16(v[i]) & 0xFFFF) << 16), b[i]);
        }
        // f16 subnormals widen exactly: 6e-8 is the smallest f16 subnormal's neighbourhood
        assertEquals(5.9604645e-8f, h[6]);
        // bf16 rounds to nearest even
        assertEquals(Float.intBitsToFloat(0x3F810000), Float.intBitsToFloat((SafetensorsWriter.toBf16(Float.intBitsToFloat(0x3F80C001)) & 0xFFFF) << 16));
        assertEquals(Float.intBitsToFloat(0x3F800000), Float.intBitsToFloat((SafetensorsWriter.toBf16(Float.intBitsToFloat(0x3F808000)) & 0xFFFF) << 16));
    }

    @Test
    void aCopiedTensorHoldsTheMappedBytes() {
        // Three tensors, one larger than HugePages.MIN_BYTES, so both kinds of allocation are filled.
        java.util.Random r = new java.util.Random(7);
        float[] small = new float[3];
        float[] large = new float[(1 << 20) / 4 * 3 / 2 + 5];
        float[] last = new float[7];
        for (float[] a : new float[][] {small, large, last}) {
            for (int i = 0; i < a.length; i++) {
                a[i] = (float) r.nextGaussian();
            }
        }
        Path p = tmp.resolve("copy.safetensors");
        new SafetensorsWriter(8).metadata("format", "pt")
                .addFloats("small", DType.BF16, new long[] {small.length}, small)
                .addFloats("large", DType.F32, new long[] {large.length}, large)
                .addFloats("last", DType.F16, new long[] {last.length}, last)
                .write(p);
        SafetensorsFile f = SafetensorsFile.open(p);
        for (String name : f.tensors().keySet()) {
            java.lang.foreign.MemorySegment mapped = f.bytes(name);
            java.lang.foreign.MemorySegment copy = f.copy(name);
            assertEquals(mapped.byteSize(), copy.byteSize(), name);
            assertEquals(-1, mapped.mismatch(copy), name);
            assertEquals(0, copy.address() % 64, name + " is 64-byte aligned");
        }
    }

    @Test
    void truncatedAndCorruptFilesAreClearErrors() throws IOException {
        Path tiny = tmp.resolve("short.safetensors");
        Files.write(tiny, new byte[] {1, 2, 3});
        assertTrue(error(tiny).contains("too short"), error(tiny));

        Path past = raw("past.safetensors", "{}", 0);
        ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(past)).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(0, 1_000_000);
        Files.write(past, b.array());
        assertTrue(error(past).contains("header length 1000000 is past the end"), error(past));

        Path json = raw("json.safetensors", "{\"a\": {\"dtype\": \"F32\",", 0);
        assertTrue(error(json).contains("not valid JSON"), error(json));

        Path range = raw("range.safetensors", "{\"w\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}", 8);
        assertTrue(error(range).contains("\"w\"") && error(range).contains("data_offsets") && error(range).contains("out of range"), error(range));

        Path overlap = raw("overlap.safetensors",
                "{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]},\"b\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[8,24]}}", 24);
        assertTrue(error(overlap).contains("overlaps"), error(overlap));

        Path dtype = raw("dtype.safetensors", "{\"w\":{\"dtype\":\"F7\",\"shape\":[4],\"data_offsets\":[0,16]}}", 16);
        assertTrue(error(dtype).contains("\"dtype\"") && error(dtype).contains("F7"), error(dtype));

        Path shape = raw("shape.safetensors", "{\"w\":{\"dtype\":\"F32\",\"data_offsets\":[0,16]}}", 16);
        assertTrue(error(shape).contains("\"shape\""), error(shape));

        Path span = raw("span.safetensors", "{\"w\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,16]}}", 16);
        assertTrue(error(span).contains("needs 12"), error(span));

        Path negative = raw("neg.safetensors", "{\"w\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[16,0]}}", 16);
        assertTrue(error(negative).contains("not a valid range"), error(negative));

        Path meta = raw("meta.safetensors", "{\"__metadata__\":{\"format\":3}}", 0);
        assertTrue(error(meta).contains("__metadata__.format"), error(meta));
    }

    @Test
    void aTruncatedModelFileNamesTheTensorThatRunsPastTheEnd() throws IOException {
        Path dir = tmp.resolve("m");
        new SyntheticCheckpoint(TestModels.oneKvHead(), 1).write(dir);
        Path file = dir.resolve("model.safetensors");
        byte[] all = Files.readAllBytes(file);
        Files.write(file, java.util.Arrays.copyOf(all, all.length - 100));
        QlabException e = assertThrows(QlabException.class, () -> Model.load(dir));
        assertTrue(e.getMessage().contains("out of range") && e.getMessage().contains("model.safetensors"), e.getMessage());
    }

    @Test
    void shardedCheckpointsReadThroughTheIndex() throws IOException {
        ModelConfig c = TestModels.untiedGroup3();
        Path whole = tmp.resolve("whole");
        Model expected = TestModels.write(c, 5, whole);
        // Split the same tensors across two shards.
        Checkpoint src = Checkpoint.open(whole);
        Path dir = tmp.resolve("sharded");
        SafetensorsWriter a = new SafetensorsWriter().metadata("format", "pt");
        SafetensorsWriter b = new SafetensorsWriter().metadata("format", "pt");
        StringBuilder map = new StringBuilder();
        int i = 0;
        for (String name : src.tensors().keySet()) {
            boolean first = i++ % 2 == 0;
            (first ? a : b).addFloats(name, DType.BF16, src.info(name).shape(), src.floats(name));
            map.append(map.isEmpty() ? "" : ",").append('"').append(name).append("\":\"")
                    .append(first ? "model-00001-of-00002.safetensors" : "model-00002-of-00002.safetensors").append('"');
        }
        a.write(dir.resolve("model-00001-of-00002.safetensors"));
        b.write(dir.resolve("model-00002-of-00002.safetensors"));
        Files.copy(whole.resolve("config.json"), dir.resolve("config.json"));
        Files.writeString(dir.resolve(Checkpoint.INDEX), "{\"metadata\":{},\"weight_map\":{" + map + "}}");
        Checkpoint sharded = Checkpoint.open(dir);
        assertEquals(2, sharded.files().size());
        assertEquals(src.tensors().keySet(), sharded.tensors().keySet());
        Model m = Model.load(dir);
        float[] row = new float[c.hiddenSize()];
        float[] want = new float[c.hiddenSize()];
        m.weights().lmHead().copyRow(3, row, 0);
        expected.weights().lmHead().copyRow(3, want, 0);
        assertArrayEquals(want, row);

        // an index naming a tensor its shard does not have
        Files.writeString(dir.resolve(Checkpoint.INDEX), "{\"weight_map\":{\"model.norm.weight\":\"model-00002-of-00002.safetensors\", \"x\":\"model-00001-of-00002.safetensors\"}}");
        String msg = assertThrows(QlabException.class, () -> Checkpoint.open(dir)).getMessage();
        assertTrue(msg.contains("weight_map"), msg);
        Files.writeString(dir.resolve(Checkpoint.INDEX), "{\"metadata\":{}}");
        msg = assertThrows(QlabException.class, () -> Checkpoint.open(dir)).getMessage();
        assertTrue(msg.contains("\"weight_map\" is missing"), msg);
    }

    @Test
    void missingExtraAndMisshapenTensorsAreAllNamed() {
        ModelConfig c = TestModels.oneKvHead();
        Map<String, long[]> shapes = new TreeMap<>(ModelManifest.of(c).expected());
        shapes.remove("model.layers.1.mlp.up_proj.weight");
        shapes.put("model.layers.0.self_attn.k_proj.bias", new long[] {7});
        shapes.put("model.layers.9.extra.weight", new long[] {2, 2});
        var problems = ModelManifest.of(c).problems(shapes);
        assertEquals(3, problems.size(), problems.toString());
        String all = String.join("\n", problems);
        assertTrue(all.contains("missing tensor model.layers.1.mlp.up_proj.weight"), all);
        assertTrue(all.contains("model.layers.0.self_attn.k_proj.bias has shape [7], expected [32]"), all);
        assertTrue(all.contains("unexpected tensor model.layers.9.extra.weight"), all);
    }
}
