package qlab.quant.checkpoint;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import qlab.engine.gguf.GgufArchitecture;
import qlab.engine.gguf.GgufFile;
import qlab.engine.gguf.GgufSampling;
import qlab.engine.gguf.GgufTensor;
import qlab.engine.gguf.GgufTokenizer;
import qlab.engine.gguf.GgufValue;
import qlab.engine.gguf.GgufValueType;
import qlab.engine.model.Model;
import qlab.engine.model.ModelConfig;
import qlab.engine.synthetic.SyntheticCheckpoint;
import qlab.engine.synthetic.SyntheticModelDirectory;
import qlab.engine.synthetic.SyntheticPreset;
import qlab.engine.testing.Fixtures;
import qlab.engine.testing.TokenizerEquivalence;
import qlab.engine.tokenizer.Tokenizer;
import qlab.engine.tokenizer.train.SyntheticTokenizer;
import qlab.engine.tokenizer.train.TrainedBpe;
import qlab.engine.util.WorkerPool;

/**
 * Exports of every preset and every fixture family, checked against what llama.cpp loads and what
 * its converter writes: the token list has one entry per row of the token embedding (and of an
 * untied output), the tokenizer reads back as the original, and the file's metadata keys and
 * their types are the converter's for the same model directory.
 */
class GgufVocabularyTest {

    @TempDir
    static Path tmp;
    static WorkerPool pool;

    @BeforeAll
    static void startPool() {
        pool = new WorkerPool(2);
    }

    @AfterAll
    static void stopPool() {
        pool.close();
    }

    /** Presets as qlab gen writes them: a tokenizer of a few hundred tokens for the preset's vocabulary rows. */
    static Stream<Arguments> presets() {
        return Stream.of(SyntheticPreset.values()).map(p -> Arguments.of(p.id(), p));
    }

    /** Every fixture family; tiny-qwen2 has no tokenizer, so it gets qlab gen's (fewer tokens than its 1,024 rows). */
    static Stream<Arguments> fixtures() {
        return Stream.of("tiny-qwen2/f32", "tiny-llama/f32", "tiny-qwen2-realvocab", "tiny-qwen3-realvocab",
                "tiny-llama3-realvocab").map(f -> Arguments.of(f));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("presets")
    void presetExportsHaveOneTokenPerEmbeddingRowAndTheConvertersKeys(String id, SyntheticPreset preset) {
        ModelConfig c = smallest(preset.config());
        Path dir = tmp.resolve("preset-" + id);
        TrainedBpe bpe = SyntheticTokenizer.write(dir, Math.min(SyntheticModelDirectory.TOKENIZER_VOCAB, c.vocabSize()),
                c.maxPositionEmbeddings(), TokenizerEquivalence.TEXTS.subList(0, 10));
        SyntheticModelDirectory.writeGenerationConfig(dir, bpe.specialTokenId(SyntheticTokenizer.EOS_TOKEN),
                bpe.specialTokenId(SyntheticTokenizer.PAD_TOKEN));
        new SyntheticCheckpoint(c, 1, bpe.size()).write(dir);
        assertTrue(bpe.size() < c.vocabSize(), "the test needs a tokenizer smaller than the embedding");
        checkExport(dir, id);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("fixtures")
    void fixtureExportsHaveOneTokenPerEmbeddingRowAndTheConvertersKeys(String fixture) throws IOException {
        Path dir = Fixtures.oracle(fixture);
        if (!Files.isRegularFile(dir.resolve("tokenizer.json"))) {
            Path copy = Files.createDirectories(tmp.resolve("fixture-" + fixture.replace('/', '-')));
            for (String f : new String[] {"config.json", "model.safetensors"}) {
                Files.copy(dir.resolve(f), copy.resolve(f));
            }
            SyntheticTokenizer.write(copy, 400, 32768, TokenizerEquivalence.TEXTS.subList(0, 10));
            dir = copy;
        }
        checkExport(dir, fixture.replace('/', '-'));
    }

    /**
     * A preset's model with its vocabulary, tying, RoPE, norms and biases but the fewest other
     * weights (one layer, 64 wide, the same head-width relation), so a 151,936-row vocabulary
     * costs megabytes rather than a gigabyte.
     */
    static ModelConfig smallest(ModelConfig p) {
        if (p.parameterCount() < 20_000_000) {
            return p;
        }
        int headDim = p.headDim() * p.numHeads() == p.hiddenSize() ? 16 : 32;
        return new ModelConfig(p.family(), 64, 128, 1, 4, 2, headDim, p.vocabSize(), p.rmsNormEps(), p.ropeTheta(),
                p.ropeScaling(), p.tieWordEmbeddings(), p.maxPositionEmbeddings(), p.torchDtype(), p.qkvBias(), p.oBias(),
                p.mlpBias(), p.qkNorm());
    }

    /** Exports {@code dir} as qlab export does (q8_0; f16 for the down projection, whose rows of 176 are no multiple of 32) and checks the file. */
    private static void checkExport(Path dir, String name) {
        Model m = Model.load(dir);
        Map<String, GgufValue> carried = GgufTokenizer.metadataOf(dir);
        carried.putAll(GgufSampling.metadataOf(dir));
        Path out = tmp.resolve(name + ".gguf");
        GgufExport.write(m, name, QuantPlan.parse("q8_0+mlp-down=f16"), null, carried, pool, out);
        GgufFile f = GgufCheckpoint.open(out);
        int rows = m.config().vocabSize();

        GgufTensor embd = f.tensor("token_embd.weight");
        assertEquals(rows, embd.ne()[1], name + ": token_embd rows");
        assertEquals(rows, f.strings(GgufTokenizer.TOKENS).size(), name + ": tokens");
        assertEquals(rows, f.ints(GgufTokenizer.TOKEN_TYPE).length, name + ": token types");
        if (!m.config().tieWordEmbeddings()) {
            assertEquals(rows, f.tensor("output.weight").ne()[1], name + ": output rows");
        } else {
            assertTrue(!f.tensors().containsKey("output.weight"), name + ": a tied model has no output tensor");
        }
        assertEquals(rows, GgufCheckpoint.load(out).config().vocabSize(), name + ": vocabulary read back");
        TokenizerEquivalence.assertSame(Tokenizer.load(dir), GgufTokenizer.read(f), name);

        Map<String, String> expected = ConverterKeys.expected(dir, GgufArchitecture.of(m.config().family()).name(), true);
        Map<String, String> actual = new TreeMap<>();
        f.metadata().forEach((k, v) -> actual.put(k, ConverterKeys.typeOf(v)));
        assertEquals(expected, actual, name + ": metadata keys and types");
    }

    /**
     * The metadata keys llama.cpp's converter (convert_hf_to_gguf.py with conversion/base.py,
     * qwen.py, llama.py and gguf-py's vocab.py, metadata.py, gguf_writer.py, at 81ff7abe) writes
     * for a Hugging Face directory of a Qwen2, Qwen3 or Llama model with a byte-level BPE
     * tokenizer.json, with the GGUF type of each, written down from its rules. Keys it takes from
     * the directory's name or model card by heuristics ({@code general.basename},
     * {@code general.finetune}, {@code general.version}, {@code general.organization},
     * {@code general.license}, ...) are optional for llama.cpp and are not in the set: qlab writes
     * none of them.
     */
    static final class ConverterKeys {

        static Map<String, String> expected(Path dir, String arch, boolean quantized) {
            JsonNode config = Fixtures.json(dir.resolve("config.json"));
            JsonNode tokenizer = Fixtures.json(dir.resolve("tokenizer.json"));
            JsonNode tc = Files.isRegularFile(dir.resolve("tokenizer_config.json"))
                    ? Fixtures.json(dir.resolve("tokenizer_config.json")) : null;
            Map<String, String> k = new TreeMap<>();
            // GGUFWriter(arch=...); ModelBase.set_type; Metadata.set_gguf_meta_model (name; size_label from the
            // parameter count when the name has none); ModelBase.prepare_metadata (quantization version)
            k.put("general.architecture", "STRING");
            k.put("general.type", "STRING");
            k.put("general.name", "STRING");
            k.put("general.size_label", "STRING");
            k.put("general.quantization_version", "UINT32");
            if (quantized) {
                k.put("general.file_type", "UINT32"); // TextModel.set_gguf_parameters: add_file_type
            }
            // Metadata.load: generation_config.json's sampling fields
            if (Files.isRegularFile(dir.resolve("generation_config.json"))) {
                JsonNode g = Fixtures.json(dir.resolve("generation_config.json"));
                String[][] fields = {{"top_k", "top_k", "INT32"}, {"top_p", "top_p", "FLOAT32"}, {"min_p", "min_p", "FLOAT32"},
                    {"temperature", "temp", "FLOAT32"}, {"penalty_last_n", "penalty_last_n", "INT32"},
                    {"penalty_repeat", "penalty_repeat", "FLOAT32"}, {"mirostat", "mirostat", "INT32"}};
                for (String[] fl : fields) {
                    if (g.hasNonNull(fl[0])) {
                        k.put("general.sampling." + fl[1], fl[2]);
                    }
                }
            }
            // TextModel.set_gguf_parameters over transformers' config (AutoConfig.to_dict(): every field these
            // families' config classes define, so context length, KV heads and rope_theta are always there)
            String p = arch + ".";
            for (String key : List.of("block_count", "context_length", "embedding_length", "feed_forward_length",
                    "attention.head_count", "attention.head_count_kv")) {
                k.put(p + key, "UINT32");
            }
            k.put(p + "rope.freq_base", "FLOAT32");
            k.put(p + "attention.layer_norm_rms_epsilon", "FLOAT32");
            // head_dim: config.json's, or the default LlamaConfig and Qwen3Config define (Qwen2Config has none)
            if (config.has("head_dim") || !arch.equals("qwen2")) {
                k.put(p + "attention.key_length", "UINT32");
                k.put(p + "attention.value_length", "UINT32");
            }
            JsonNode rope = config.path("rope_scaling");
            if (rope.path("rope_type").asText(rope.path("type").asText("")).equals("linear")) {
                k.put(p + "rope.scaling.type", "STRING");
                k.put(p + "rope.scaling.factor", "FLOAT32");
            }
            if (arch.equals("llama")) { // LlamaModel.set_gguf_parameters
                k.put(p + "vocab_size", "UINT32");
                k.put(p + "rope.dimension_count", "UINT32");
            }
            // TextModel._set_vocab_gpt2 (get_vocab_base, get_vocab_base_pre)
            k.put("tokenizer.ggml.model", "STRING");
            k.put("tokenizer.ggml.pre", "STRING");
            k.put("tokenizer.ggml.tokens", "ARRAY of STRING");
            k.put("tokenizer.ggml.token_type", "ARRAY of INT32");
            // SpecialVocab(load_merges=True).add_to_gguf
            k.put("tokenizer.ggml.merges", "ARRAY of STRING");
            List<String> added = new ArrayList<>();
            tokenizer.path("added_tokens").forEach(t -> added.add(t.path("content").asText()));
            String[][] ids = {{"bos", "bos_token_id"}, {"eos", "eos_token_id"}, {"unk", "unknown_token_id"},
                {"sep", "seperator_token_id"}, {"pad", "padding_token_id"}, {"mask", "mask_token_id"}};
            for (String[] id : ids) {
                JsonNode named = tc == null ? null : tc.path(id[0] + "_token");
                String text = named == null ? null : named.isTextual() ? named.asText() : named.path("content").asText(null);
                if ((text != null && added.contains(text)) || config.path(id[0] + "_token_id").isIntegralNumber()) {
                    k.put("tokenizer.ggml." + id[1], "UINT32");
                }
            }
            for (String typ : List.of("bos", "eos", "sep")) {
                if (tc != null && tc.path("add_" + typ + "_token").isBoolean()) {
                    k.put("tokenizer.ggml.add_" + typ + "_token", "BOOL");
                }
            }
            for (JsonNode proc : tokenizer.path("post_processor").has("processors")
                    ? tokenizer.path("post_processor").path("processors") : List.of(tokenizer.path("post_processor"))) {
                if (proc.path("type").asText().equals("TemplateProcessing") && proc.path("single").size() > 1
                        && proc.path("single").get(0).has("SpecialToken")) {
                    k.put("tokenizer.ggml.add_bos_token", "BOOL");
                }
            }
            if (tc != null && tc.path("chat_template").isTextual() || Files.isRegularFile(dir.resolve("chat_template.jinja"))) {
                k.put("tokenizer.chat_template", "STRING");
            }
            if (arch.equals("llama") && tc != null && tc.hasNonNull("add_prefix_space")) { // LlamaModel.set_vocab
                k.put("tokenizer.ggml.add_space_prefix", "BOOL");
            }
            return k;
        }

        static String typeOf(GgufValue v) {
            return v.type() == GgufValueType.ARRAY ? "ARRAY of " + v.elementType() : v.type().name();
        }
    }

    /** The expectation itself, on a directory whose answer is known: Qwen2.5's real tokenizer files. */
    @Test
    void theConvertersKeysForQwen25IncludeItsSpecialIdsAndTemplate() {
        Map<String, String> k = ConverterKeys.expected(Fixtures.oracle("tiny-qwen2-realvocab"), "qwen2", true);
        assertEquals("UINT32", k.get("tokenizer.ggml.bos_token_id"));
        assertEquals("UINT32", k.get("tokenizer.ggml.eos_token_id"));
        assertEquals("UINT32", k.get("tokenizer.ggml.padding_token_id"));
        assertEquals("BOOL", k.get("tokenizer.ggml.add_bos_token"));
        assertEquals("STRING", k.get("tokenizer.chat_template"));
        assertTrue(!k.containsKey("qwen2.attention.key_length") && !k.containsKey("qwen2.vocab_size"), k.toString());
        assertEquals(24, k.size(), k.toString());
    }
}
