package qlab.engine.tokenizer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static qlab.engine.tokenizer.OracleCorpus.ints;
import static qlab.engine.tokenizer.OracleCorpus.readJsonl;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import qlab.engine.testing.Fixtures;

/**
 * The tokenizer against goldens from the reference library (Hugging Face tokenizers, cross-checked
 * with transformers.js): the 3000-string corpus, 300 decode cases, the model manifest's prompts and
 * greedy continuations, and the chat-template cases.
 */
class TokenizerOracleTest {
    private static Path oracle;
    private static Tokenizer tokenizer;
    private static List<JsonNode> corpus;

    @BeforeAll
    static void load() throws IOException {
        if (tokenizer != null) {
            return; // already loaded by another test class in this JVM
        }
        oracle = Fixtures.oracle();
        tokenizer = Tokenizer.load(oracle.resolve("tiny-qwen2-realvocab"));
        corpus = readJsonl(oracle.resolve("tokenizer/corpus.jsonl"));
    }

    @Test
    void corpusEncodesToTheReferenceIds() {
        int passed = 0;
        List<String> failures = new ArrayList<>();
        for (JsonNode line : corpus) {
            int[] expected = ints(line.get("ids"));
            int[] actual = tokenizer.encode(line.get("text").asText());
            if (java.util.Arrays.equals(expected, actual)) {
                passed++;
            } else if (failures.size() < 5) {
                failures.add("id " + line.get("id") + " (" + line.get("family").asText() + "): expected "
                        + java.util.Arrays.toString(expected) + " got " + java.util.Arrays.toString(actual));
            }
        }
        System.out.println("tokenizer corpus: encode exact " + passed + "/" + corpus.size());
        assertEquals(3000, corpus.size());
        assertEquals(corpus.size(), passed, String.join("\n", failures));
    }

    @Test
    void corpusDecodesLikeTheReference() {
        int passed = 0;
        int roundTrips = 0;
        for (JsonNode line : corpus) {
            String text = line.get("text").asText();
            int[] ids = ints(line.get("ids"));
            String decoded = line.has("decoded") ? line.get("decoded").asText() : text;
            String decodedSkip = line.has("decoded_skip_special_tokens")
                    ? line.get("decoded_skip_special_tokens").asText() : decoded;
            String id = "corpus id " + line.get("id");
            assertEquals(decoded, tokenizer.decode(ids, false), id);
            assertEquals(decodedSkip, tokenizer.decode(ids, true), id + " (skip special)");
            if (line.get("roundtrip_exact").asBoolean()) {
                assertEquals(text, tokenizer.decode(tokenizer.encode(text), false), id + " round trip");
                roundTrips++;
            }
            passed++;
        }
        System.out.println("tokenizer corpus: decode exact " + passed + "/" + corpus.size() + ", round trips " + roundTrips);
        assertEquals(2788, roundTrips);
    }

    @Test
    void decodeCasesMatchTheReference() throws IOException {
        assertEquals(300, OracleCorpus.checkDecodeCases(tokenizer, oracle.resolve("tokenizer/decode_cases.jsonl")));
    }

    @Test
    void streamingDecodeEqualsFullDecode() throws IOException {
        assertEquals(3300, OracleCorpus.checkStreaming(tokenizer, oracle.resolve("tokenizer/corpus.jsonl"),
                oracle.resolve("tokenizer/decode_cases.jsonl")));
    }

    @Test
    void streamingHoldsSplitCharactersUntilComplete() {
        // "中" is E4 B8 AD: three byte tokens; nothing is released until the third arrives.
        int[] ids = new int[3];
        byte[] bytes = "中".getBytes(java.nio.charset.StandardCharsets.UTF_8);
        for (int i = 0; i < 3; i++) {
            ids[i] = tokenizer.tokenId(String.valueOf(ByteLevelAlphabet.charOf(bytes[i] & 0xFF))).orElseThrow();
        }
        StreamingDecoder stream = tokenizer.streamingDecoder(false);
        assertEquals("", stream.accept(ids[0]));
        assertEquals("", stream.accept(ids[1]));
        assertEquals("中", stream.accept(ids[2]));
        assertEquals("", stream.finish());
        StreamingDecoder cut = tokenizer.streamingDecoder(false);
        assertEquals("", cut.accept(ids[0]));
        assertEquals("\uFFFD", cut.finish());
    }

    @Test
    void modelManifestPromptsAndGreedyContinuations() throws IOException {
        assertEquals(5, OracleCorpus.checkManifest(tokenizer, oracle.resolve("tiny-qwen2-realvocab/golden/manifest.json")));
    }

    @Test
    void chatCasesEncodeToTheirExpectedIds() throws IOException {
        assertEquals(6, OracleCorpus.checkChatIds(tokenizer, oracle.resolve("chat/cases.jsonl")));
    }

    @Test
    void concurrentEncodingSharesTheCacheSafely() throws Exception {
        // A fresh instance (cold cache), four threads encoding the whole corpus in different orders.
        Tokenizer fresh = Tokenizer.load(oracle.resolve("tiny-qwen2-realvocab/tokenizer.json"));
        List<java.util.concurrent.Future<Integer>> results = new ArrayList<>();
        try (var pool = java.util.concurrent.Executors.newFixedThreadPool(4)) {
            for (int t = 0; t < 4; t++) {
                int offset = t * 750;
                results.add(pool.submit(() -> {
                    int exact = 0;
                    for (int k = 0; k < corpus.size(); k++) {
                        JsonNode line = corpus.get((k + offset) % corpus.size());
                        if (java.util.Arrays.equals(ints(line.get("ids")), fresh.encode(line.get("text").asText()))) {
                            exact++;
                        }
                    }
                    return exact;
                }));
            }
            for (var r : results) {
                assertEquals(corpus.size(), r.get());
            }
        }
    }

    @Test
    void vocabularyQueries() {
        assertEquals(151645, tokenizer.tokenId("<|im_end|>").orElseThrow());
        assertEquals(151667, tokenizer.tokenId("<think>").orElseThrow());
        assertTrue(tokenizer.tokenId("<|im_end|").isEmpty());
        assertEquals(151669, tokenizer.vocabSize());
        assertTrue(tokenizer.isSpecial(151645));
        assertTrue(!tokenizer.isSpecial(151667));
        assertEquals("<|im_end|>", tokenizer.tokenText(151645));
        assertEquals("", tokenizer.decode(new int[] {151645}, true));
        assertEquals("<think>", tokenizer.decode(new int[] {151667}, true));
        // Ids beyond every token are dropped, as the reference does.
        assertEquals("", tokenizer.decode(new int[] {151900, -1}, false));
    }

    /** Corpus texts as pre-tokenized (after added-token removal and NFC), for the agreement tests. */
    static List<String> corpusTexts() {
        List<String> out = new ArrayList<>();
        for (JsonNode line : corpus) {
            out.add(java.text.Normalizer.normalize(line.get("text").asText(), java.text.Normalizer.Form.NFC));
        }
        return out;
    }

    static Tokenizer tokenizer() {
        return tokenizer;
    }
}
