package qlab.engine.tokenizer;

import qlab.engine.testing.Fixtures;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The Llama 3 tokenizer (byte-level BPE, its own split pattern with digits in groups of up to three,
 * {@code ignore_merges}) against the reference library's goldens: 2000 strings, 300 decode cases, the
 * model manifest's prompts and continuations, and the Llama 3 chat cases' ids.
 */
class TokenizerLlama3OracleTest {
    private static Path oracle;
    private static Tokenizer tokenizer;

    @BeforeAll
    static void load() {
        Fixtures.oracle("tokenizer-llama3");
        oracle = Fixtures.oracle();
        tokenizer = Tokenizer.load(oracle.resolve("tiny-llama3-realvocab"));
    }

    @Test
    void corpusEncodesAndDecodesLikeTheReference() throws IOException {
        OracleCorpus.Result r = OracleCorpus.check(tokenizer, oracle.resolve("tokenizer-llama3/corpus.jsonl"));
        assertEquals(2000, r.lines());
        assertEquals(List.of(), r.failures());
        assertEquals(2000, r.roundTrips());
    }

    @Test
    void decodeCasesMatchTheReference() throws IOException {
        assertEquals(300, OracleCorpus.checkDecodeCases(tokenizer, oracle.resolve("tokenizer-llama3/decode_cases.jsonl")));
    }

    @Test
    void streamingDecodeEqualsFullDecode() throws IOException {
        assertEquals(2300, OracleCorpus.checkStreaming(tokenizer, oracle.resolve("tokenizer-llama3/corpus.jsonl"),
                oracle.resolve("tokenizer-llama3/decode_cases.jsonl")));
    }

    @Test
    void modelManifestPromptsAndGreedyContinuations() throws IOException {
        assertEquals(5, OracleCorpus.checkManifest(tokenizer, oracle.resolve("tiny-llama3-realvocab/golden/manifest.json")));
    }

    @Test
    void chatCasesEncodeToTheirExpectedIds() throws IOException {
        assertEquals(6, OracleCorpus.checkChatIds(tokenizer, oracle.resolve("chat/cases_llama3.jsonl")));
    }

    @Test
    void digitsAreSplitInGroupsOfThreeFromTheLeft() {
        int[] ids = tokenizer.encode("1234567");
        assertEquals("1234567", tokenizer.decode(ids));
        assertEquals(List.of("123", "456", "7"), java.util.Arrays.stream(ids).mapToObj(tokenizer::tokenText).toList());
    }
}
