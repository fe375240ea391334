package qlab.engine.gguf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import qlab.engine.QlabException;
import qlab.engine.testing.Fixtures;
import qlab.engine.testing.TokenizerEquivalence;
import qlab.engine.tokenizer.Tokenizer;
import qlab.engine.tokenizer.train.SyntheticTokenizer;

/**
 * The tokenizer metadata an export writes for Qwen2, Qwen3 and Llama 3 tokenizers, as llama.cpp's
 * converter writes it (token list padded to the embedding's rows with its placeholders), and the
 * tokenizer read back from it.
 */
class GgufTokenizerTest {

    @TempDir
    Path tmp;

    @Test
    void llama3AndQwen3TokenizersGetTheirPreTokenizerNames() {
        assertEquals("llama-bpe", GgufTokenizer.metadataOf(Fixtures.oracle("tiny-llama3-realvocab")).get(GgufTokenizer.PRE).value());
        assertEquals("qwen2", GgufTokenizer.metadataOf(Fixtures.oracle("tiny-qwen3-realvocab")).get(GgufTokenizer.PRE).value());
    }

    /**
     * Llama 3.x's tokenizer.json puts {@code <|begin_of_text|>} first in a TemplateProcessing
     * post-processor and its tokenizer_config.json has no add_bos_token: the converter then writes
     * add_bos_token = true. Without such a template it writes nothing.
     */
    @Test
    void aTemplateThatStartsWithTheBosTokenMeansAddBos() throws IOException {
        Path src = Fixtures.oracle("tiny-llama3-realvocab");
        assertFalse(GgufTokenizer.metadataOf(src).containsKey("tokenizer.ggml.add_bos_token"));
        Path dir = Files.createDirectories(tmp.resolve("llama3-template"));
        ObjectMapper mapper = new ObjectMapper();
        ObjectNode tokenizer = (ObjectNode) mapper.readTree(src.resolve("tokenizer.json").toFile());
        ObjectNode template = mapper.createObjectNode().put("type", "TemplateProcessing");
        template.putArray("single").add(mapper.createObjectNode().set("SpecialToken",
                mapper.createObjectNode().put("id", "<|begin_of_text|>").put("type_id", 0)))
                .add(mapper.createObjectNode().set("Sequence", mapper.createObjectNode().put("id", "A").put("type_id", 0)));
        ObjectNode sequence = mapper.createObjectNode().put("type", "Sequence");
        sequence.putArray("processors").add(tokenizer.get("post_processor")).add(template);
        tokenizer.set("post_processor", sequence);
        mapper.writeValue(dir.resolve("tokenizer.json").toFile(), tokenizer);
        Files.copy(src.resolve("tokenizer_config.json"), dir.resolve("tokenizer_config.json"));
        Map<String, GgufValue> m = GgufTokenizer.metadataOf(dir);
        assertEquals(true, m.get("tokenizer.ggml.add_bos_token").value());
        assertEquals(128000L, ((Number) m.get("tokenizer.ggml.bos_token_id").value()).longValue());
    }
    /** Real Qwen2.5/Qwen3 vocabularies: 151,669 tokens for 151,936 embedding rows. */
    @Test
    void paddingAppendsTheConvertersPlaceholdersUpToTheEmbeddingRows() {
        Map<String, GgufValue> m = GgufTokenizer.metadataOf(Fixtures.oracle("tiny-qwen3-realvocab"));
        assertEquals(151669, m.get(GgufTokenizer.TOKENS).list().size());
        Map<String, GgufValue> padded = GgufTokenizer.padTo(m, 151936, "test");
        List<?> tokens = padded.get(GgufTokenizer.TOKENS).list();
        List<?> types = padded.get(GgufTokenizer.TOKEN_TYPE).list();
        assertEquals(151936, tokens.size());
        assertEquals(151936, types.size());
        assertEquals("<think>", tokens.get(151667));
        assertEquals("</think>", tokens.get(151668));
        for (int id = 151669; id < 151936; id++) {
            assertEquals("[PAD" + id + "]", tokens.get(id));
            assertEquals(5L, types.get(id), "token type unused at " + id);
        }
        assertEquals(m.get(GgufTokenizer.TOKENS).list(), tokens.subList(0, 151669));
        assertEquals(m.get(GgufTokenizer.TOKEN_TYPE).list(), types.subList(0, 151669));
        assertSame(m.get(GgufTokenizer.MERGES), padded.get(GgufTokenizer.MERGES));
        for (String key : m.keySet()) {
            if (!key.equals(GgufTokenizer.TOKENS) && !key.equals(GgufTokenizer.TOKEN_TYPE)) {
                assertEquals(m.get(key), padded.get(key), key);
            }
        }
        assertSame(m, GgufTokenizer.padTo(m, 151669, "test"));
        QlabException e = assertThrows(QlabException.class, () -> GgufTokenizer.padTo(m, 151000, "models/x"));
        assertTrue(e.getMessage().startsWith("models/x: the tokenizer has 151669 tokens, more than the 151000 rows"), e.getMessage());
    }

    @Test
    void scoresArePaddedWithTheTokenList() {
        Map<String, GgufValue> m = new java.util.LinkedHashMap<>();
        m.put(GgufTokenizer.TOKENS, GgufValue.array(GgufValueType.STRING, List.of("a", "b")));
        m.put(GgufTokenizer.SCORES, GgufValue.array(GgufValueType.FLOAT32, List.of(-1.0, -2.0)));
        Map<String, GgufValue> padded = GgufTokenizer.padTo(m, 4, "test");
        assertEquals(List.of("a", "b", "[PAD2]", "[PAD3]"), padded.get(GgufTokenizer.TOKENS).list());
        assertEquals(List.of(-1.0, -2.0, -10000.0, -10000.0), padded.get(GgufTokenizer.SCORES).list());
        assertFalse(padded.containsKey(GgufTokenizer.TOKEN_TYPE));
        assertSame(Map.of(), GgufTokenizer.padTo(Map.of(), 4, "test"));
    }

    /**
     * Added tokens that are special, or look special ({@code <|fim_prefix|>} is not special in
     * Qwen's tokenizer.json), are control tokens (3); other added tokens are user-defined (4).
     * Special ids come from tokenizer_config.json's token names first, then config.json's ids.
     */
    @Test
    void tokenTypesAndSpecialIdsFollowTheConverter() {
        Map<String, GgufValue> q = GgufTokenizer.metadataOf(Fixtures.oracle("tiny-qwen2-realvocab"));
        List<?> tokens = q.get(GgufTokenizer.TOKENS).list();
        List<?> types = q.get(GgufTokenizer.TOKEN_TYPE).list();
        assertEquals(3L, types.get(tokens.indexOf("<|im_end|>")));
        assertEquals(3L, types.get(tokens.indexOf("<|fim_prefix|>")));
        assertEquals(4L, types.get(tokens.indexOf("<think>")));
        assertEquals(1L, types.get(tokens.indexOf("Hello")));
        assertEquals(151643L, q.get("tokenizer.ggml.bos_token_id").value()); // config.json: tokenizer_config.json's is null
        assertEquals(151645L, q.get("tokenizer.ggml.eos_token_id").value());
        assertEquals(151643L, q.get("tokenizer.ggml.padding_token_id").value());
        assertEquals(false, q.get("tokenizer.ggml.add_bos_token").value());
        assertFalse(q.containsKey("tokenizer.ggml.unknown_token_id"));
        assertFalse(q.containsKey("tokenizer.ggml.add_space_prefix")); // a llama-only key
        Map<String, GgufValue> l = GgufTokenizer.metadataOf(Fixtures.oracle("tiny-llama3-realvocab"));
        assertEquals(128000L, l.get("tokenizer.ggml.bos_token_id").value());
        // tokenizer_config.json names <|end_of_text|>; config.json's 128009 is second
        assertEquals(128001L, l.get("tokenizer.ggml.eos_token_id").value());
        assertFalse(l.containsKey("tokenizer.ggml.padding_token_id"));
    }

    /** Ids the tokenizer leaves free inside its range get placeholders too, and read back as free. */
    @Test
    void freeIdsInsideTheVocabularyBecomePlaceholders() throws IOException {
        Path src = Fixtures.oracle("tiny-llama", "f32");
        Path dir = Files.createDirectories(tmp.resolve("gap"));
        String json = Files.readString(src.resolve("tokenizer.json"));
        assertTrue(json.contains("\"id\": 511"), "the fixture's <|eot_id|> is 511");
        Files.writeString(dir.resolve("tokenizer.json"), json.replace("\"id\": 511", "\"id\": 513"));
        Files.copy(src.resolve("config.json"), dir.resolve("config.json"));
        Map<String, GgufValue> m = GgufTokenizer.metadataOf(dir);
        List<?> tokens = m.get(GgufTokenizer.TOKENS).list();
        assertEquals(List.of("[PAD511]", "[PAD512]", "<|eot_id|>"), tokens.subList(511, 514));
        assertEquals(List.of(5L, 5L, 3L), m.get(GgufTokenizer.TOKEN_TYPE).list().subList(511, 514));
        Tokenizer original = Tokenizer.load(dir);
        TokenizerEquivalence.assertSame(original, readBack(GgufTokenizer.padTo(m, 520, "test"), "gap"), "gap");
    }

    /** Every tokenizer family qlab exports, through a GGUF file and back, padded to its model's rows. */
    @ParameterizedTest
    @ValueSource(strings = {"tiny-qwen2-realvocab", "tiny-qwen3-realvocab", "tiny-llama3-realvocab", "tiny-llama/f32"})
    void aPaddedTokenizerReadsBackAsTheOriginal(String fixture) {
        Path dir = Fixtures.oracle(fixture);
        int rows = Fixtures.json(dir.resolve("config.json")).get("vocab_size").asInt();
        Tokenizer back = readBack(GgufTokenizer.padTo(GgufTokenizer.metadataOf(dir), rows, fixture), fixture.replace('/', '-'));
        Set<Integer> nowControl = TokenizerEquivalence.assertSame(Tokenizer.load(dir), back, fixture);
        if (fixture.startsWith("tiny-qwen")) {
            // <|fim_prefix|> ... <|file_sep|>: added, not special, but <|...|>
            assertEquals(6, nowControl.size(), nowControl.toString());
        } else {
            assertEquals(Set.of(), nowControl);
        }
    }

    /** The tokenizer qlab gen writes: a few hundred tokens for a model of Qwen2.5's 151,936 rows. */
    @Test
    void aSyntheticTokenizerPaddedToAPresetsRowsReadsBackAsTheOriginal() {
        Path dir = tmp.resolve("synthetic");
        SyntheticTokenizer.write(dir, 400, 32768, TokenizerEquivalence.TEXTS.subList(0, 10));
        Map<String, GgufValue> m = GgufTokenizer.padTo(GgufTokenizer.metadataOf(dir), 151936, "synthetic");
        assertEquals(151936, m.get(GgufTokenizer.TOKENS).list().size());
        TokenizerEquivalence.assertSame(Tokenizer.load(dir), readBack(m, "synthetic"), "synthetic");
    }

    private Tokenizer readBack(Map<String, GgufValue> metadata, String name) {
        GgufWriter w = new GgufWriter(GgufFile.DEFAULT_ALIGNMENT);
        w.put("general.architecture", GgufValue.string("qwen2"));
        metadata.forEach(w::put);
        Path p = tmp.resolve(name + ".gguf");
        w.write(p);
        return GgufTokenizer.read(GgufFile.open(p, GgufTensorType.FLOATS));
    }
}
