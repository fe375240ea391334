package qlab.engine.tokenizer.train;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import qlab.engine.QlabException;
import qlab.engine.testing.Fixtures;

class TokenizerJsonWriterTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path tmp;

    private static TrainedBpe smallBpe() {
        return SyntheticTokenizer.trainBpe(700, TestCorpus.documents(21, 20_000));
    }

    private static List<String> keys(JsonNode node) {
        List<String> out = new ArrayList<>();
        node.fieldNames().forEachRemaining(out::add);
        return out;
    }

    @Test
    void tokenizerJsonHasQwen2sStructure() throws IOException {
        TrainedBpe bpe = smallBpe();
        JsonNode ours = JSON.readTree(TokenizerJsonWriter.tokenizerJson(bpe));
        assertEquals(List.of("version", "truncation", "padding", "added_tokens", "normalizer", "pre_tokenizer",
                "post_processor", "decoder", "model"), keys(ours));
        assertEquals(List.of("type", "dropout", "unk_token", "continuing_subword_prefix", "end_of_word_suffix",
                "fuse_unk", "byte_fallback", "ignore_merges", "vocab", "merges"), keys(ours.get("model")));
        assertEquals("NFC", ours.at("/normalizer/type").asText());
        assertEquals(Qwen2PreTokenizer.REGEX, ours.at("/pre_tokenizer/pretokenizers/0/pattern/Regex").asText());
        assertEquals("Isolated", ours.at("/pre_tokenizer/pretokenizers/0/behavior").asText());
        assertFalse(ours.at("/pre_tokenizer/pretokenizers/1/use_regex").asBoolean(true));
        assertTrue(ours.at("/model/dropout").isNull());

        JsonNode added = ours.get("added_tokens");
        assertEquals(3, added.size());
        for (int i = 0; i < 3; i++) {
            assertEquals(bpe.tokens().size() + i, added.get(i).get("id").asInt());
            assertEquals(BpeTrainer.QWEN_SPECIAL_TOKENS.get(i), added.get(i).get("content").asText());
            assertTrue(added.get(i).get("special").asBoolean());
            assertFalse(added.get(i).get("normalized").asBoolean(true));
        }

        // vocab: every id 0..n-1 exactly once, written in id order.
        JsonNode vocab = ours.at("/model/vocab");
        assertEquals(bpe.tokens().size(), vocab.size());
        Iterator<Map.Entry<String, JsonNode>> it = vocab.fields();
        for (int id = 0; it.hasNext(); id++) {
            Map.Entry<String, JsonNode> e = it.next();
            assertEquals(id, e.getValue().asInt());
            assertEquals(bpe.tokens().get(id), e.getKey());
        }
        // merges: [left, right] pairs whose parts and concatenation are tokens.
        JsonNode merges = ours.at("/model/merges");
        assertEquals(bpe.merges().size(), merges.size());
        assertEquals(700 - 3 - 256, merges.size());
        for (int i = 0; i < merges.size(); i++) {
            JsonNode m = merges.get(i);
            assertEquals(2, m.size());
            assertTrue(vocab.has(m.get(0).asText()) && vocab.has(m.get(1).asText()));
            assertEquals(bpe.merges().get(i).result(), vocab.get(m.get(0).asText() + m.get(1).asText()).asInt());
        }
    }

    @Test
    void componentsEqualTheRealQwen2TokenizerJson() throws IOException {
        Path fixture = Fixtures.oracle().resolve("tiny-qwen2-realvocab");
        JsonNode qwen = JSON.readTree(fixture.resolve("tokenizer.json").toFile());
        JsonNode ours = JSON.readTree(TokenizerJsonWriter.tokenizerJson(smallBpe()));
        assertEquals(keys(qwen), keys(ours));
        for (String field : List.of("version", "truncation", "padding", "normalizer", "pre_tokenizer",
                "post_processor", "decoder")) {
            assertEquals(qwen.get(field), ours.get(field), field);
        }
        assertEquals(keys(qwen.get("model")), keys(ours.get("model")));
        for (String field : keys(qwen.get("model"))) {
            if (!field.equals("vocab") && !field.equals("merges")) {
                assertEquals(qwen.get("model").get(field), ours.get("model").get(field), "model." + field);
            }
        }
        assertEquals(keys(qwen.get("added_tokens").get(0)), keys(ours.get("added_tokens").get(0)));
        // The first three added tokens and their flags are Qwen's, only the ids differ.
        for (int i = 0; i < 3; i++) {
            JsonNode q = qwen.get("added_tokens").get(i).deepCopy();
            JsonNode o = ours.get("added_tokens").get(i).deepCopy();
            ((com.fasterxml.jackson.databind.node.ObjectNode) q).remove("id");
            ((com.fasterxml.jackson.databind.node.ObjectNode) o).remove("id");
            assertEquals(q, o);
        }
        // Merges in the same [left, right] form; the base vocabulary in the same id order.
        assertTrue(qwen.at("/model/merges/0").isArray() && ours.at("/model/merges/0").isArray());
        for (int id = 0; id < 256; id++) {
            String token = String.valueOf(ByteLevelAlphabet.charOf(ByteLevelAlphabet.byteOf(id)));
            assertEquals(id, qwen.at("/model/vocab").get(token).asInt(), token);
            assertEquals(id, ours.at("/model/vocab").get(token).asInt(), token);
        }

        JsonNode qwenConfig = JSON.readTree(fixture.resolve("tokenizer_config.json").toFile());
        JsonNode ourConfig = JSON.readTree(TokenizerJsonWriter.tokenizerConfigJson(smallBpe(), "<|im_end|>", "<|endoftext|>", 32768));
        for (String field : keys(ourConfig)) {
            assertTrue(qwenConfig.has(field), field);
        }
        for (String field : List.of("add_bos_token", "add_prefix_space", "bos_token", "clean_up_tokenization_spaces",
                "eos_token", "errors", "pad_token", "split_special_tokens", "tokenizer_class", "unk_token")) {
            assertEquals(qwenConfig.get(field), ourConfig.get(field), field);
        }
    }

    @Test
    void tokenizerConfigNamesOurSpecialTokens() throws IOException {
        TrainedBpe bpe = smallBpe();
        JsonNode config = JSON.readTree(TokenizerJsonWriter.tokenizerConfigJson(bpe, "<|im_end|>", "<|endoftext|>", 32768));
        assertEquals("<|im_end|>", config.get("eos_token").asText());
        assertEquals("<|endoftext|>", config.get("pad_token").asText());
        assertEquals(32768, config.get("model_max_length").asInt());
        for (String special : bpe.specialTokens()) {
            assertEquals(special, config.at("/added_tokens_decoder/" + bpe.specialTokenId(special) + "/content").asText());
        }
        // As in Qwen2.5's tokenizer_config.json: every special token but the padding one.
        assertEquals(JSON.readTree("[\"<|im_start|>\", \"<|im_end|>\"]"), config.get("additional_special_tokens"));
        QlabException e = assertThrows(QlabException.class,
                () -> TokenizerJsonWriter.tokenizerConfigJson(bpe, "</s>", "<|endoftext|>", 32768));
        assertEquals("tokenizer_config.json: field \"eos_token\" is \"</s>\", which is not one of the special tokens "
                + "[<|endoftext|>, <|im_start|>, <|im_end|>]", e.getMessage());
    }

    @Test
    void writesBothFilesDeterministically() throws IOException {
        List<String> corpus = TestCorpus.documents(22, 15_000);
        SyntheticTokenizer.write(tmp.resolve("a"), 600, 32768, corpus);
        SyntheticTokenizer.write(tmp.resolve("b/nested"), 600, 32768, corpus);
        for (String file : List.of(TokenizerJsonWriter.TOKENIZER_JSON, TokenizerJsonWriter.TOKENIZER_CONFIG_JSON)) {
            byte[] a = Files.readAllBytes(tmp.resolve("a").resolve(file));
            assertTrue(a.length > 0);
            assertEquals(new String(a, java.nio.charset.StandardCharsets.UTF_8),
                    Files.readString(tmp.resolve("b/nested").resolve(file)));
        }
        assertEquals(SyntheticTokenizer.train(600, corpus), Files.readString(tmp.resolve("a/tokenizer.json")));
        String text = Files.readString(tmp.resolve("a/tokenizer.json"));
        assertTrue(text.startsWith("{\n  \"version\": \"1.0\",\n"), text.substring(0, 40));
        assertFalse(text.contains("\r"));
    }
}
