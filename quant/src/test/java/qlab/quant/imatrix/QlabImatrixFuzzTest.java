package qlab.quant.imatrix;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import qlab.engine.testing.FuzzContract;

/** An importance matrix in qlab's format (safetensors) of any bytes, loaded (docs/correctness.md#fuzzing: the contract, the seeds, how to run a campaign). */
@Tag("fuzz")
class QlabImatrixFuzzTest {

    @FuzzTest(maxExecutions = 3000, maxDuration = "20s")
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void qlabImatrix(byte[] data) {
        FuzzContract.onFile(data, "fuzz.imatrix", p -> ImportanceMatrix.load(p).tokens());
    }
}
