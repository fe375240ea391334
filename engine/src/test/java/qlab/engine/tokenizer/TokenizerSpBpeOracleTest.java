package qlab.engine.tokenizer;

import qlab.engine.testing.Fixtures;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The SentencePiece-style BPE tokenizer of Llama 2 (normalizer Prepend "▁" + Replace " " → "▁", no
 * pre-tokenizer, byte fallback to {@code <0xNN>}, decoder Replace / ByteFallback / Fuse / Strip) against
 * the reference library's goldens: 2000 strings, 240 decode cases and 60 decode cases with invalid byte
 * runs (where the reference turns every byte of the run into U+FFFD).
 */
class TokenizerSpBpeOracleTest {
    private static Path dir;
    private static Tokenizer tokenizer;

    @BeforeAll
    static void load() {
        dir = Fixtures.oracle("tokenizer-spbpe");
        tokenizer = Tokenizer.load(dir);
    }

    @Test
    void corpusEncodesAndDecodesLikeTheReference() throws IOException {
        OracleCorpus.Result r = OracleCorpus.check(tokenizer, dir.resolve("corpus.jsonl"));
        assertEquals(2000, r.lines());
        assertEquals(List.of(), r.failures());
        assertEquals(1914, r.roundTrips());
    }

    @Test
    void decodeCasesMatchTheReference() throws IOException {
        assertEquals(240, OracleCorpus.checkDecodeCases(tokenizer, dir.resolve("decode_cases.jsonl")));
        assertEquals(60, OracleCorpus.checkDecodeCases(tokenizer, dir.resolve("decode_cases_invalid_byte_runs.jsonl")));
    }

    @Test
    void streamingDecodeEqualsFullDecode() throws IOException {
        assertEquals(2300, OracleCorpus.checkStreaming(tokenizer, dir.resolve("corpus.jsonl"),
                dir.resolve("decode_cases.jsonl"), dir.resolve("decode_cases_invalid_byte_runs.jsonl")));
    }

    @Test
    void textAfterAnAddedTokenGetsItsOwnPrefix() {
        assertArrayEquals(new int[] {1, 2245}, tokenizer.encode("<s>text"));
        assertEquals("<s> text", tokenizer.decode(new int[] {1, 2245}, false));
        assertEquals("text", tokenizer.decode(new int[] {1, 2245}, true));
    }

    @Test
    void specialTokensFromThePostProcessorAreAddedOnRequest() {
        int[] plain = tokenizer.encode("hello");
        int[] withBos = tokenizer.encode("hello", true);
        assertEquals(plain.length + 1, withBos.length);
        assertEquals(1, withBos[0]);
        assertArrayEquals(plain, java.util.Arrays.copyOfRange(withBos, 1, withBos.length));
        assertArrayEquals(plain, tokenizer.encode("hello", false));
    }

    @Test
    void charactersMissingFromTheVocabularyFallBackToBytes() {
        // U+E000 (private use) is not a token: its UTF-8 bytes EE 80 80 are.
        int[] ids = tokenizer.encode("\uE000");
        List<String> tokens = java.util.Arrays.stream(ids).mapToObj(tokenizer::tokenText).toList();
        assertEquals(List.of("▁", "<0xEE>", "<0x80>", "<0x80>"), tokens);
        assertEquals("\uE000", tokenizer.decode(ids));
    }

    @Test
    void byteFallbackRunsWithAnInvalidByteBecomeOneReplacementPerByte() {
        int a = tokenizer.tokenId("<0x41>").orElseThrow();
        int bad = tokenizer.tokenId("<0xFF>").orElseThrow();
        assertEquals("\uFFFD\uFFFD\uFFFD", tokenizer.decode(new int[] {a, bad, a}));
        assertEquals("AA", tokenizer.decode(new int[] {a, a}));
    }

    @Test
    void streamingHoldsAByteRunUntilItEnds() {
        byte[] utf8 = "中".getBytes(java.nio.charset.StandardCharsets.UTF_8);
        StreamingDecoder stream = tokenizer.streamingDecoder(false);
        for (byte b : utf8) {
            assertEquals("", stream.accept(tokenizer.tokenId(CharSymbols.byteTokenText(b & 0xFF)).orElseThrow()));
        }
        assertEquals("中", stream.accept(tokenizer.tokenId("▁a").orElseThrow()).substring(0, 1));
        assertEquals("", stream.finish());
    }

    static List<JsonNode> corpus() throws IOException {
        return OracleCorpus.readJsonl(dir.resolve("corpus.jsonl"));
    }
}
