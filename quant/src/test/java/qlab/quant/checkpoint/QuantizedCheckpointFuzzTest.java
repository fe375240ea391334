package qlab.quant.checkpoint;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import qlab.engine.testing.FuzzContract;
import qlab.quant.fuzz.FuzzModels;

/** A quantized checkpoint of any bytes: its provenance read, the model loaded and run on one token (docs/correctness.md#fuzzing: the contract, the seeds, how to run a campaign). */
@Tag("fuzz")
class QuantizedCheckpointFuzzTest {

    @FuzzTest(maxExecutions = 2000, maxDuration = "20s")
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void quantizedCheckpoint(byte[] data) {
        FuzzContract.onFile(data, "fuzz.safetensors", p -> FuzzContract.each(
                () -> QuantizedCheckpoint.provenance(p),
                () -> FuzzModels.runOneToken(QuantizedCheckpoint.load(p))));
    }
}
