package qlab.engine.model;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import java.nio.charset.StandardCharsets;
import qlab.engine.testing.FuzzContract;

/** A config.json of any bytes: parsed, and the derived sizes and RoPE frequencies computed (docs/correctness.md#fuzzing: the contract, the seeds, how to run a campaign). */
@Tag("fuzz")
class ModelConfigFuzzTest {

    @FuzzTest(maxExecutions = 5000, maxDuration = "20s")
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void configJson(byte[] data) {
        String text = new String(data, StandardCharsets.UTF_8);
        FuzzContract.check(data.length, () -> {
            ModelConfig c = ModelConfig.parse(text);
            c.parameterCount();
            c.ropeInverseFrequencies();
            c.describe();
        });
    }
}
