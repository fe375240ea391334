package qlab.engine.safetensors;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import qlab.engine.testing.FuzzContract;

/** A safetensors file of any bytes: opened, then every tensor it declares read as floats (docs/correctness.md#fuzzing: the contract, the seeds, how to run a campaign). */
@Tag("fuzz")
class SafetensorsFuzzTest {

    @FuzzTest(maxExecutions = 3000, maxDuration = "20s")
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void safetensors(byte[] data) {
        FuzzContract.onFile(data, "model.safetensors", p -> {
            SafetensorsFile f = SafetensorsFile.open(p);
            for (String name : f.tensors().keySet()) {
                f.floats(name);
            }
        });
    }
}
