package qlab.engine.tokenizer;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import qlab.engine.testing.FuzzContract;

/** A tokenizer.json of any bytes: loaded, then a mixed text encoded and decoded (docs/correctness.md#fuzzing: the contract, the seeds, how to run a campaign). */
@Tag("fuzz")
class TokenizerJsonFuzzTest {

    private static final String TEXT = "Hello world, 12345 <|im_end|> ünïcode\n\n  spaced \u00e9\ud83d\ude00";

    @FuzzTest(maxExecutions = 2000, maxDuration = "20s")
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void tokenizerJson(byte[] data) {
        FuzzContract.onFile(data, "tokenizer.json", p -> {
            Tokenizer t = Tokenizer.load(p);
            t.decode(t.encode(TEXT));
        });
    }
}
