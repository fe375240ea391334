package qlab.quant.checkpoint;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import qlab.engine.model.KvCache;
import qlab.engine.model.Model;
import qlab.engine.model.ModelManifest;
import qlab.engine.model.ReferenceModel;
import qlab.engine.model.Transformer;
import qlab.engine.safetensors.DType;
import qlab.engine.safetensors.SafetensorsFile;
import qlab.engine.testing.Fixtures;
import qlab.engine.testing.TestModels;
import qlab.engine.util.WorkerPool;
import qlab.quant.Formats;
import qlab.quant.imatrix.ImportanceMatrix;

/**
 * Llama and Qwen3 models through every quantization format: the quantized checkpoint keeps their
 * extra tensors (q/k norms, o_proj and MLP biases) in f32, a written file loads back to the same
 * logits as the in-memory model (f32 and int8 activations), and the fast path on the quantized
 * weights agrees with the float64 reference on the same dequantized weights.
 */
class FamilyCheckpointTest {

    @TempDir
    static Path tmp;

    static WorkerPool pool;

    @BeforeAll
    static void start() {
        pool = new WorkerPool(2);
    }

    @AfterAll
    static void stop() {
        pool.close();
    }

    static Stream<String> models() {
        return Stream.of("tiny-llama", "llama-biases", "qwen3-biases", "qwen3-norms");
    }

    private static Model source(String name) {
        return switch (name) {
            case "tiny-llama" -> Model.load(Fixtures.oracle().resolve("tiny-llama/f32")); // llama3 RoPE, untied
            case "llama-biases" -> TestModels.write(TestModels.llamaBiases(), 3, tmp.resolve(name));
            case "qwen3-biases" -> TestModels.write(TestModels.qwen3Biases(), 3, tmp.resolve(name));
            case "qwen3-norms" -> TestModels.write(TestModels.qwen3Norms(), 3, tmp.resolve(name));
            default -> throw new IllegalArgumentException(name);
        };
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("models")
    void everyFormatWritesLoadsAndAgreesWithTheReference(String name) {
        Model f32 = source(name);
        int vocab = f32.config().vocabSize();
        int[] x = new SplittableRandom(4).ints(13, 0, vocab).toArray();
        ImportanceMatrix importance = ImportanceMatrix.calibrate(new Transformer(f32, pool),
                List.of(new SplittableRandom(5).ints(80, 0, vocab).toArray()), List.of("random"), 40, name);
        importance.checkAgainst(f32.config(), tmp.resolve(name + ".imatrix"));
        Map<String, float[]> vectors = f32.weights().vectors();
        for (String format : Formats.names()) {
            QuantPlan plan = QuantPlan.parse(format);
            Model mem = QuantizedCheckpoint.quantize(f32, plan, importance, pool);
            Path file = tmp.resolve(name + "-" + format + ".safetensors");
            QuantizedCheckpoint.write(mem, Map.of("plan", plan.toString()), file);

            // every norm and bias of the family, stored f32 and bit-identical
            SafetensorsFile f = SafetensorsFile.open(file);
            for (var e : vectors.entrySet()) {
                assertEquals(DType.F32, f.info(e.getKey()).dtype(), e.getKey());
                assertArrayEquals(e.getValue(), f.floats(e.getKey()), e.getKey());
            }
            assertEquals(ModelManifest.of(f32.config()).expected().keySet(), f.tensors().keySet(), format);

            Model mapped = QuantizedCheckpoint.load(file, false, false);
            assertEquals(f32.config(), mapped.config());
            float[] a = new Transformer(mem, pool).forward(x, new KvCache(mem.config(), 16), true);
            float[] b = new Transformer(mapped, pool).forward(x, new KvCache(mapped.config(), 16), true);
            assertArrayEquals(a, b, name + " " + format + ": in memory vs written and mapped");

            double[][] ref = new ReferenceModel(mapped).logits(x);
            double worst = 0;
            for (int t = 0; t < x.length; t++) {
                for (int j = 0; j < vocab; j++) {
                    worst = Math.max(worst, Math.abs(b[t * vocab + j] - ref[t][j]));
                }
            }
            assertTrue(worst < 1e-3, name + " " + format + ": fast vs reference " + worst);

            float[] int8 = new Transformer(QuantizedCheckpoint.load(file, true, false), pool)
                    .forward(x, new KvCache(mapped.config(), 16), true);
            for (float l : int8) {
                assertTrue(Float.isFinite(l), name + " " + format + ": int8 activations");
            }
        }
    }
}
