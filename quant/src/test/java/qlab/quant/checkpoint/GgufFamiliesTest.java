package qlab.quant.checkpoint;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import qlab.engine.QlabException;
import qlab.engine.gguf.GgufFile;
import qlab.engine.gguf.GgufModelConfig;
import qlab.engine.gguf.GgufTokenizer;
import qlab.engine.gguf.GgufValue;
import qlab.engine.gguf.GgufWriter;
import qlab.engine.model.Model;
import qlab.engine.model.ModelConfig;
import qlab.engine.model.RopeScaling;
import qlab.engine.model.Transformer;
import qlab.engine.testing.Fixtures;
import qlab.engine.testing.TestModels;
import qlab.engine.tokenizer.Tokenizer;
import qlab.engine.util.WorkerPool;
import qlab.quant.QuantizedMatrix;

/**
 * llama and qwen3 models written as GGUF and read back: the same forward pass as the model they
 * were written from (bitwise for f32, and for a quantized type bitwise the in-memory quantization
 * of the same plan), llama's q/k rows in the order llama.cpp's converter writes them.
 */
class GgufFamiliesTest {

    @TempDir
    static Path tmp;
    static WorkerPool pool;

    static final int[] TOKENS = {1, 7, 42, 299, 3, 150, 8};

    @BeforeAll
    static void startPool() {
        pool = new WorkerPool(2);
    }

    @AfterAll
    static void stopPool() {
        pool.close();
    }

    /** Llama: 256-wide rows (k-quant blocks fit), llama3 RoPE with three blended frequencies (original context 512). */
    static ModelConfig llama3() {
        return ModelConfig.llama(256, 512, 2, 4, 2, 64, 300, 1e-5, 500_000.0, RopeScaling.llama3(8, 1, 4, 512),
                false, 4096, "bfloat16", false, false);
    }

    /** Llama with q/k/v/o and MLP biases (the q and k biases are reordered too), linear RoPE x4, tied head. */
    static ModelConfig llamaBiases() {
        return ModelConfig.llama(256, 512, 2, 4, 2, 64, 300, 1e-5, 10_000.0, RopeScaling.linear(4),
                true, 4096, "bfloat16", true, true);
    }

    /** Qwen3: q/k norms, head dim 32 apart from hidden 256 / 8 heads, 2 KV heads. */
    static ModelConfig qwen3() {
        return ModelConfig.qwen3(256, 512, 2, 8, 2, 32, 300, 1e-6, 1_000_000.0, RopeScaling.NONE, true, 4096, "bfloat16", false);
    }

    static Stream<Arguments> families() {
        return Stream.of(Arguments.of("llama3", llama3()), Arguments.of("llama-biases", llamaBiases()),
                Arguments.of("qwen3", qwen3()));
    }

    private static Path export(Model m, String spec, String name) {
        Path out = tmp.resolve(name + "." + spec + ".gguf");
        GgufExport.write(m, name, QuantPlan.parse(spec), null, Map.of(), pool, out);
        return out;
    }

    private static float[] logits(Model m) {
        Transformer t = new Transformer(m, pool);
        return t.forward(TOKENS, t.newCache(TOKENS.length), true);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("families")
    void anF32ExportRunsBitwiseAsTheSafetensorsModel(String name, ModelConfig config) {
        Model m = TestModels.write(config, 11, tmp.resolve(name));
        Path out = export(m, "f32", name);
        GgufFile f = GgufCheckpoint.open(out);
        assertEquals(config.family().modelType(), f.string("general.architecture"));
        Model back = GgufCheckpoint.load(out);
        assertEquals(m.config().describe(), back.config().describe());
        assertArrayEquals(m.config().ropeInverseFrequencies(), back.config().ropeInverseFrequencies());
        assertArrayEquals(logits(m), logits(back));
    }

    @ParameterizedTest(name = "{0} {2}")
    @MethodSource("quantizedCases")
    void aQuantizedExportRunsBitwiseAsTheSamePlanQuantizedInMemory(String name, ModelConfig config, String spec) {
        Model m = TestModels.write(config, 12, tmp.resolve(name + "-" + spec));
        Model back = GgufCheckpoint.load(export(m, spec, name));
        Model direct = QuantizedCheckpoint.quantize(m, QuantPlan.parse(spec), null, pool);
        for (int layer = 0; layer < config.numLayers(); layer++) {
            var got = back.weights().layers()[layer];
            var want = direct.weights().layers()[layer];
            assertEquals(-1, ((QuantizedMatrix) got.q()).data().mismatch(((QuantizedMatrix) want.q()).data()), "q " + layer);
            assertEquals(-1, ((QuantizedMatrix) got.k()).data().mismatch(((QuantizedMatrix) want.k()).data()), "k " + layer);
        }
        assertArrayEquals(logits(direct), logits(back));
    }

    static Stream<Arguments> quantizedCases() {
        return families().flatMap(a -> Stream.of("q8_0", "q4_0", "q4_k")
                .map(spec -> Arguments.of(a.get()[0], a.get()[1], spec)));
    }

    /**
     * llama.cpp's converter, {@code LlamaModel.permute}: {@code w.reshape(n_head, 2, rows / n_head / 2,
     * cols).swapaxes(1, 2).reshape(rows, cols)}, with n_head = the KV head count for k. Written here
     * as the index map of that reshape, and compared with the exported tensors' bytes.
     */
    @Test
    void llamasQAndKRowsAreStoredAsLlamaCppsConverterPermutesThem() {
        ModelConfig c = llamaBiases();
        Model m = TestModels.write(c, 13, tmp.resolve("permute"));
        GgufFile f = GgufCheckpoint.open(export(m, "f32", "permute"));
        var layer = m.weights().layers()[1];
        float[] q = ((qlab.engine.tensor.F32Matrix) layer.q()).data();
        float[] k = ((qlab.engine.tensor.F32Matrix) layer.k()).data();
        assertArrayEquals(converterPermute(q, c.numHeads(), c.hiddenSize()), floats(f, "blk.1.attn_q.weight"));
        assertArrayEquals(converterPermute(k, c.numKvHeads(), c.hiddenSize()), floats(f, "blk.1.attn_k.weight"));
        assertArrayEquals(converterPermute(layer.qBias(), c.numHeads(), 1), floats(f, "blk.1.attn_q.bias"));
        assertArrayEquals(converterPermute(layer.kBias(), c.numKvHeads(), 1), floats(f, "blk.1.attn_k.bias"));
        // v, o and the MLP are written as they are
        assertArrayEquals(((qlab.engine.tensor.F32Matrix) layer.v()).data(), floats(f, "blk.1.attn_v.weight"));
        assertArrayEquals(layer.vBias(), floats(f, "blk.1.attn_v.bias"));
    }

    private static float[] converterPermute(float[] w, int nHead, int cols) {
        int rows = w.length / cols;
        int half = rows / nHead / 2;
        float[] out = new float[w.length];
        // source shape (nHead, 2, half, cols); after swapaxes(1, 2) the element [h][b][a][col] is source [h][a][b][col]
        for (int h = 0; h < nHead; h++) {
            for (int b = 0; b < half; b++) {
                for (int a = 0; a < 2; a++) {
                    for (int col = 0; col < cols; col++) {
                        int dst = ((h * half + b) * 2 + a) * cols + col;
                        int src = ((h * 2 + a) * half + b) * cols + col;
                        out[dst] = w[src];
                    }
                }
            }
        }
        return out;
    }

    private static float[] floats(GgufFile f, String name) {
        return f.bytes(name).toArray(ValueLayout.JAVA_FLOAT_UNALIGNED);
    }

    @Test
    void llama3ScalingIsWrittenAsLlamaCppsRopeFreqsTensor() {
        ModelConfig c = llama3();
        Model m = TestModels.write(c, 14, tmp.resolve("freqs"));
        GgufFile f = GgufCheckpoint.open(export(m, "f32", "freqs"));
        float[] divisors = floats(f, "rope_freqs.weight");
        double[] unscaled = RopeScaling.NONE.inverseFrequencies(c.ropeTheta(), c.headDim());
        double[] scaled = c.ropeInverseFrequencies();
        int blended = 0;
        for (int i = 0; i < divisors.length; i++) {
            // llama.cpp rotates by base^(-2i/d) / divisor[i]: transformers' scaled frequency
            assertEquals(scaled[i], unscaled[i] / divisors[i], 1e-7 * scaled[i], "frequency " + i);
            blended += divisors[i] != 1f && divisors[i] != 8f ? 1 : 0;
        }
        assertEquals(3, blended);
        assertFalse(f.has("llama.rope.scaling.type"));
        assertEquals(c.headDim(), f.integer("llama.rope.dimension_count"));
        assertEquals(c.vocabSize(), f.integer("llama.vocab_size"));
    }

    @Test
    void llama3ScalingWithOneBlendedFrequencyReadsBackToTheSameConfig() {
        Model m = TestModels.write(TestModels.llama3Scaled(), 15, tmp.resolve("one-blended"));
        Model back = GgufCheckpoint.load(export(m, "f32", "one-blended"));
        assertEquals(m.config().describe(), back.config().describe());
        assertArrayEquals(logits(m), logits(back));
    }

    @Test
    void ropeDivisorsOfLlama32ReadBackAsItsScaling() {
        // Llama-3.2-1B: theta 500000, head dim 64, factor 32, low 1, high 4, original 8192
        RopeScaling s = RopeScaling.llama3(32, 1, 4, 8192);
        assertEquals(s, GgufModelConfig.llama3FromFactors(GgufModelConfig.ropeDivisors(s, 500_000, 64), 500_000, 64).orElseThrow());
        float[] notLlama3 = GgufModelConfig.ropeDivisors(s, 500_000, 64);
        notLlama3[20] *= 1.5f;
        assertTrue(GgufModelConfig.llama3FromFactors(notLlama3, 500_000, 64).isEmpty());
    }

    @Test
    void realVocabularyModelsCarryTheirTokenizerAndRunAsFromSafetensors() {
        for (String name : new String[] {"tiny-llama3-realvocab", "tiny-qwen3-realvocab"}) {
            Path dir = Fixtures.oracle(name);
            Model m = Model.load(dir);
            Path out = tmp.resolve(name + ".gguf");
            GgufExport.write(m, name, QuantPlan.parse("f32"), null, GgufTokenizer.metadataOf(dir), pool, out);
            GgufFile f = GgufCheckpoint.open(out);
            assertEquals(name.contains("llama") ? "llama-bpe" : "qwen2", f.string(GgufTokenizer.PRE), name);
            String text = "Hello world, 12345 times: ünïcode\n\n  spaced";
            assertArrayEquals(Tokenizer.load(dir).encode(text), GgufTokenizer.read(f).encode(text), name);
            Model back = GgufCheckpoint.load(out);
            assertArrayEquals(m.config().ropeInverseFrequencies(), back.config().ropeInverseFrequencies(), name);
            assertArrayEquals(logits(m), logits(back), name);
        }
    }

    @Test
    void qwen3WithAttentionBiasesIsRefusedNamingTheField() {
        Model m = TestModels.write(TestModels.qwen3Biases(), 16, tmp.resolve("qwen3-biases"));
        Path out = tmp.resolve("qwen3-biases.gguf");
        QlabException e = assertThrows(QlabException.class,
                () -> GgufExport.write(m, "b", QuantPlan.parse("f32"), null, Map.of(), pool, out));
        assertTrue(e.getMessage().contains("\"attention_bias\""), e.getMessage());
        assertFalse(Files.exists(out));
    }

    @Test
    void anUnknownArchitectureOrUnsupportedKeyFailsNamingTheField() {
        Model m = TestModels.write(qwen3(), 17, tmp.resolve("fields"));
        Path good = export(m, "f32", "fields");
        GgufFile f = GgufCheckpoint.open(good);
        assertFailsNaming(rewrite(f, "general.architecture", GgufValue.string("gemma3")), "\"general.architecture\"");
        assertFailsNaming(rewrite(f, "qwen3.rope.scaling.type", GgufValue.string("yarn")), "\"qwen3.rope.scaling.type\"");
        assertFailsNaming(rewrite(f, "qwen3.expert_count", GgufValue.u32(8)), "\"qwen3.expert_count\"");
        assertFailsNaming(rewrite(f, "qwen3.rope.dimension_count", GgufValue.u32(16)), "\"qwen3.rope.dimension_count\"");
    }

    /**
     * Seeded mutations of a llama export's header and of its rope_freqs divisors (random bytes,
     * extremes, NaN and infinite floats): each reads, or fails with a one-line QlabException naming the file.
     */
    @Test
    void mutatedLlamaHeadersAndRopeDivisorsFailOnlyAsNamedErrors() throws Exception {
        Model m = TestModels.write(TestModels.llama3Scaled(), 18, tmp.resolve("mutate"));
        Path file = export(m, "f32", "mutate");
        byte[] original = Files.readAllBytes(file);
        GgufFile parsed = GgufCheckpoint.open(file);
        int header = (int) parsed.dataStart();
        int freqs = (int) (parsed.dataStart() + parsed.tensor("rope_freqs.weight").offset());
        int freqsLength = (int) parsed.tensor("rope_freqs.weight").bytes();
        float[] odd = {Float.NaN, Float.POSITIVE_INFINITY, -1f, 0f, 1e-30f, 3e38f, 0.5f, 8.000001f};
        java.util.Random rnd = new java.util.Random(20261201L);
        int failed = 0;
        int trials = 1500;
        for (int trial = 0; trial < trials; trial++) {
            byte[] b = original.clone();
            var le = java.nio.ByteBuffer.wrap(b).order(java.nio.ByteOrder.LITTLE_ENDIAN);
            switch (rnd.nextInt(3)) {
                case 0 -> le.putFloat(freqs + 4 * rnd.nextInt(freqsLength / 4), odd[rnd.nextInt(odd.length)]);
                case 1 -> le.putInt(8 + rnd.nextInt(header - 12), rnd.nextBoolean() ? -1 : rnd.nextInt(1 << 16));
                default -> b[rnd.nextInt(header)] = (byte) rnd.nextInt(256);
            }
            try {
                GgufFile f = GgufFile.read("mutated.gguf", java.lang.foreign.MemorySegment.ofArray(b), GgufCheckpoint.TYPES);
                qlab.engine.gguf.GgufModel.of(f);
            } catch (QlabException e) {
                assertFalse(e.getMessage().contains("\n"), e.getMessage());
                assertTrue(e.getMessage().startsWith("mutated.gguf: "), e.getMessage());
                failed++;
            } catch (Throwable t) {
                throw new AssertionError("trial " + trial + " escaped as " + t, t);
            }
        }
        assertTrue(failed > trials / 4, "only " + failed + " of " + trials + " mutations were rejected");
    }

    private static void assertFailsNaming(Path file, String field) {
        QlabException e = assertThrows(QlabException.class, () -> GgufCheckpoint.load(file));
        assertTrue(e.getMessage().startsWith(file.toString()) && e.getMessage().contains(field), e.getMessage());
        assertFalse(e.getMessage().contains("\n"));
    }

    /** A copy of {@code f} with one metadata value set. */
    private static Path rewrite(GgufFile f, String key, GgufValue value) {
        GgufWriter w = new GgufWriter(f.alignment());
        f.metadata().forEach((k, v) -> {
            if (!k.equals(key)) {
                w.put(k, v);
            }
        });
        w.put(key, value);
        f.tensors().values().forEach(t -> w.tensor(t.name(), t.ne(), t.type(), t.bytes(), () -> f.bytes(t.name())));
        Path out = tmp.resolve("rewritten-" + key.replace('.', '-') + ".gguf");
        w.write(out);
        return out;
    }
}
