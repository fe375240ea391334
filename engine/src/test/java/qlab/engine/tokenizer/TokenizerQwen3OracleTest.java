package qlab.engine.tokenizer;

import qlab.engine.testing.Fixtures;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The Qwen3 tokenizer on its model manifest's prompts and continuations and on the Qwen3 chat cases' ids. */
class TokenizerQwen3OracleTest {
    private static Path oracle;
    private static Tokenizer tokenizer;

    @BeforeAll
    static void load() {
        Fixtures.oracle("tiny-qwen3-realvocab");
        oracle = Fixtures.oracle();
        tokenizer = Tokenizer.load(oracle.resolve("tiny-qwen3-realvocab"));
    }

    @Test
    void modelManifestPromptsAndGreedyContinuations() throws IOException {
        assertEquals(5, OracleCorpus.checkManifest(tokenizer, oracle.resolve("tiny-qwen3-realvocab/golden/manifest.json")));
    }

    @Test
    void chatCasesEncodeToTheirExpectedIds() throws IOException {
        assertEquals(6, OracleCorpus.checkChatIds(tokenizer, oracle.resolve("chat/cases_qwen3.jsonl")));
    }
}
