package qlab.quant.fuzz;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import qlab.engine.gguf.GgufTensorType;
import qlab.engine.gguf.GgufTokenizer;
import qlab.engine.gguf.GgufValue;
import qlab.engine.gguf.GgufValueType;
import qlab.engine.gguf.GgufWriter;
import qlab.engine.model.Model;
import qlab.engine.model.ModelConfig;
import qlab.engine.safetensors.DType;
import qlab.engine.safetensors.SafetensorsWriter;
import qlab.engine.testing.TestModels;
import qlab.engine.tokenizer.train.SyntheticTokenizer;
import qlab.engine.util.WorkerPool;
import qlab.quant.checkpoint.GgufExport;
import qlab.quant.checkpoint.QuantPlan;
import qlab.quant.checkpoint.QuantizedCheckpoint;
import qlab.quant.imatrix.ImportanceMatrix;
import qlab.quant.imatrix.LlamaImatrix;

/**
 * Writes the valid seed files of the engine's and quant's fuzz targets (the known-bad seeds are
 * written by hand or kept from findings). Run once from the repository root after a format
 * changes: {@code java -cp <quant test classpath> qlab.quant.fuzz.FuzzSeedWriter .}
 */
public final class FuzzSeedWriter {

    private FuzzSeedWriter() {}

    public static void main(String[] args) throws IOException {
        Path root = Path.of(args.length > 0 ? args[0] : ".");
        Path engine = root.resolve("engine/src/test/resources/qlab/engine");
        Path quant = root.resolve("quant/src/test/resources/qlab/quant");
        Path work = Files.createTempDirectory("qlab-seeds");

        // A tiny model (hidden 32, one layer, one head) with a byte-level tokenizer of 300 entries.
        Path modelDir = work.resolve("tiny");
        ModelConfig config = new ModelConfig(32, 32, 1, 1, 1, 32, 300, 1e-5, 10_000.0, true, 64, "float32");
        Model model = TestModels.write(config, 7, modelDir);
        SyntheticTokenizer.write(modelDir, 300, 64, List.of("hello world, hello fuzz", "the quick brown fox 123"));

        Path st = seeds(engine, "safetensors/SafetensorsFuzzTest", "safetensors");
        Files.copy(modelDir.resolve("model.safetensors"), st.resolve("tiny-model.safetensors"));
        new SafetensorsWriter().metadata("format", "pt")
                .addFloats("a", DType.F32, new long[] {2, 2}, new float[] {1, 2, 3, 4})
                .addFloats("b", DType.F16, new long[] {3}, new float[] {1, -2, 0.5f})
                .addFloats("c", DType.BF16, new long[] {1, 2}, new float[] {7, 8})
                .write(st.resolve("three-dtypes.safetensors"));
        Files.write(st.resolve("bad-header-length-2pow60.safetensors"), header(1L << 60, "{}"));
        Files.write(st.resolve("bad-offsets-past-end.safetensors"),
                header(-1, "{\"x\":{\"dtype\":\"F32\",\"shape\":[1152921504606846976],\"data_offsets\":[0,4611686018427387904]}}"));

        Path cfg = seeds(engine, "model/ModelConfigFuzzTest", "configJson");
        Files.copy(modelDir.resolve("config.json"), cfg.resolve("tiny.json"));
        Files.writeString(cfg.resolve("bad-heads-2pow40.json"), Files.readString(modelDir.resolve("config.json"))
                .replaceFirst("\"num_attention_heads\"\\s*:\\s*1", "\"num_attention_heads\": 1099511627776"));

        Path tok = seeds(engine, "tokenizer/TokenizerJsonFuzzTest", "tokenizerJson");
        Files.copy(modelDir.resolve("tokenizer.json"), tok.resolve("tiny-bpe.json"));

        // GGUF: the tiny model exported as f32 and q8_0 with its tokenizer, a tokenizer-only file, a bare container.
        try (WorkerPool pool = new WorkerPool(1)) {
            Map<String, GgufValue> tokenizer = GgufTokenizer.metadataOf(modelDir);
            Path f32 = work.resolve("tiny.f32.gguf");
            GgufExport.write(model, "tiny", QuantPlan.parse("f32"), null, tokenizer, pool, f32);
            Path q8 = work.resolve("tiny.q8_0.gguf");
            GgufExport.write(model, "tiny", QuantPlan.parse("q8_0"), null, tokenizer, pool, q8);
            Path gf = seeds(engine, "gguf/GgufFileFuzzTest", "gguf");
            Files.copy(f32, gf.resolve("tiny.f32.gguf"));
            Path tokOnly = gf.resolve("tokenizer-only.gguf");
            GgufWriter w = new GgufWriter(32).put("general.architecture", GgufValue.string("qwen2"));
            tokenizer.forEach(w::put);
            w.write(tokOnly);
            new GgufWriter(32)
                    .put("general.architecture", GgufValue.string("qwen2"))
                    .put("list", GgufValue.array(GgufValueType.INT32, List.of(1L, 2L, 3L)))
                    .tensor("a", new long[] {8}, GgufTensorType.F32, 32, () -> MemorySegment.ofArray(new byte[32]))
                    .write(gf.resolve("container.gguf"));
            Path gm = seeds(quant, "checkpoint/GgufModelFuzzTest", "ggufModel");
            Files.copy(q8, gm.resolve("tiny.q8_0.gguf"));
            Files.copy(f32, gm.resolve("tiny.f32.gguf"));

            Path qc = seeds(quant, "checkpoint/QuantizedCheckpointFuzzTest", "quantizedCheckpoint");
            Model q = QuantizedCheckpoint.quantize(model, QuantPlan.parse("q8_0"), null, pool);
            QuantizedCheckpoint.write(q, Map.of("source", "tiny"), qc.resolve("tiny.q8_0.safetensors"));
            Model q4 = QuantizedCheckpoint.quantize(model, QuantPlan.parse("q4_0"), null, pool);
            QuantizedCheckpoint.write(q4, Map.of("source", "tiny"), qc.resolve("tiny.q4_0.safetensors"));
        }

        Map<String, float[]> v = new LinkedHashMap<>();
        v.put("model.layers.0.self_attn.q_proj.weight", ramp(32));
        v.put("model.layers.0.mlp.down_proj.weight", ramp(32));
        ImportanceMatrix im = new ImportanceMatrix(v, Map.of("format", ImportanceMatrix.FORMAT, "tokens", "64"));
        im.save(seeds(quant, "imatrix/QlabImatrixFuzzTest", "qlabImatrix").resolve("two.imatrix"));
        LlamaImatrix.save(im, LlamaImatrix.Format.DAT,
                seeds(quant, "imatrix/LlamaImatrixDatFuzzTest", "imatrixDat").resolve("two.dat"));
        LlamaImatrix.save(im, LlamaImatrix.Format.GGUF,
                seeds(quant, "imatrix/LlamaImatrixGgufFuzzTest", "imatrixGguf").resolve("two.gguf"));
        System.out.println("seeds written under " + engine + " and " + quant);
    }

    private static float[] ramp(int n) {
        float[] v = new float[n];
        for (int i = 0; i < n; i++) {
            v[i] = 0.25f + i;
        }
        return v;
    }

    /** A safetensors prefix: the 8-byte length ({@code -1}: the text's own length) and the header text. */
    private static byte[] header(long declared, String json) {
        byte[] h = json.getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(8 + h.length).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(declared < 0 ? h.length : declared).put(h);
        return b.array();
    }

    private static Path seeds(Path base, String classPath, String method) throws IOException {
        Path dir = base.resolve(classPath + "Inputs").resolve(method);
        Files.createDirectories(dir);
        return dir;
    }

}
