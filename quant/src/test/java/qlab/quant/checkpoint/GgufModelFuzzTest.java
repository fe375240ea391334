package qlab.quant.checkpoint;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import qlab.engine.testing.FuzzContract;
import qlab.quant.fuzz.FuzzModels;

/** A GGUF model file of any bytes, with every ggml type qlab reads: loaded as a model and run on one token (docs/correctness.md#fuzzing: the contract, the seeds, how to run a campaign). */
@Tag("fuzz")
class GgufModelFuzzTest {

    @FuzzTest(maxExecutions = 2000, maxDuration = "20s")
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void ggufModel(byte[] data) {
        FuzzContract.onFile(data, "fuzz.gguf", p -> FuzzModels.runOneToken(GgufCheckpoint.load(p)));
    }
}
