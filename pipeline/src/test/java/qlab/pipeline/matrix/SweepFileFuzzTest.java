package qlab.pipeline.matrix;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import qlab.engine.testing.FuzzContract;

/** A sweep file of any bytes: parsed and its matrix expanded (docs/correctness.md#fuzzing: the contract, the seeds, how to run a campaign). */
@Tag("fuzz")
class SweepFileFuzzTest {

    @FuzzTest(maxExecutions = 3000, maxDuration = "20s")
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void sweepFile(byte[] data) {
        FuzzContract.onFile(data, "sweep.yaml", p -> MatrixExpansion.expand(SweepFileParser.parse(p)).runnable());
    }
}
