package qlab.engine.gguf;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import java.lang.foreign.MemorySegment;
import qlab.engine.testing.FuzzContract;

/** A GGUF file of any bytes: the container read, each float tensor widened, then its model config and tokenizer read (docs/correctness.md#fuzzing: the contract, the seeds, how to run a campaign). */
@Tag("fuzz")
class GgufFileFuzzTest {

    @FuzzTest(maxExecutions = 3000, maxDuration = "20s")
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void gguf(byte[] data) {
        FuzzContract.check(data.length, () -> {
            GgufFile f = GgufFile.read("fuzz.gguf", MemorySegment.ofArray(data), GgufTensorType.FLOATS);
            FuzzContract.each(
                    () -> f.tensors().forEach((name, t) -> f.floats(name)),
                    () -> GgufModel.of(f).config().parameterCount(),
                    () -> {
                        if (GgufTokenizer.present(f)) {
                            GgufTokenizer.read(f).encode("Hello world, 12345");
                        }
                    });
        });
    }
}
