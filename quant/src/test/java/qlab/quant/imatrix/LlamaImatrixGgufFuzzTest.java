package qlab.quant.imatrix;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import qlab.engine.testing.FuzzContract;

/** An importance matrix in llama.cpp's GGUF format of any bytes, read and converted to qlab's (docs/correctness.md#fuzzing: the contract, the seeds, how to run a campaign). */
@Tag("fuzz")
class LlamaImatrixGgufFuzzTest {

    @FuzzTest(maxExecutions = 3000, maxDuration = "20s")
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void imatrixGguf(byte[] data) {
        FuzzContract.onFile(data, "fuzz.gguf", p -> LlamaImatrix.load(p).tokens());
    }
}
