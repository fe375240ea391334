package qlab.quant.checkpoint;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import qlab.engine.eval.Perplexity;
import qlab.engine.eval.ScoringMode;
import qlab.engine.model.Model;
import qlab.engine.model.Transformer;
import qlab.engine.tensor.F32Matrix;
import qlab.engine.tensor.Matrix;
import qlab.engine.testing.Fixtures;
import qlab.engine.util.WorkerPool;
import qlab.quant.QuantizedMatrix;

class MappedCheckpointWeightsTest {

    @Test
    void matricesStayInTheMappingWithTheWidenedValues() {
        for (String dtype : new String[] {"bf16", "f16", "f32"}) {
            Path dir = Fixtures.oracle().resolve("tiny-qwen2").resolve(dtype);
            Model heap = Model.load(dir);
            Model mapped = MappedCheckpointWeights.load(dir);
            assertEquals(heap.config(), mapped.config());
            Map<String, Matrix> want = heap.weights().matrices();
            Map<String, Matrix> got = mapped.weights().matrices();
            assertEquals(want.keySet(), got.keySet());
            for (Map.Entry<String, Matrix> e : got.entrySet()) {
                Matrix m = e.getValue();
                // read in place in the checkpoint's own element type: no f32 heap copy
                assertTrue(m instanceof QuantizedMatrix, e.getKey() + " is " + m.getClass().getSimpleName());
                assertEquals(dtype, m.format(), e.getKey());
                F32Matrix w = (F32Matrix) want.get(e.getKey());
                float[] row = new float[m.cols()];
                for (int r = 0; r < m.rows(); r++) {
                    m.copyRow(r, row, 0);
                    assertArrayEquals(java.util.Arrays.copyOfRange(w.data(), r * m.cols(), (r + 1) * m.cols()), row,
                            0f, e.getKey() + " row " + r);
                }
            }
            if (heap.weights().lmHead() == heap.weights().embed()) {
                assertSame(mapped.weights().embed(), mapped.weights().lmHead());
            }
            assertEquals(heap.weights().vectors().keySet(), mapped.weights().vectors().keySet());
            for (String name : heap.weights().vectors().keySet()) {
                assertArrayEquals(heap.weights().vectors().get(name), mapped.weights().vectors().get(name), 0f, name);
            }
        }
    }

    @Test
    void scoresAsTheHeapModel() {
        Path dir = Fixtures.oracle().resolve("tiny-qwen2").resolve("bf16");
        Model heap = Model.load(dir);
        int[] ids = new SplittableRandom(3).ints(300, 0, heap.config().vocabSize()).toArray();
        try (WorkerPool pool = new WorkerPool(2)) {
            for (ScoringMode mode : ScoringMode.values()) {
                Perplexity.Result a = Perplexity.run(new Transformer(heap, pool), ids, 100, mode);
                Perplexity.Result b = Perplexity.run(new Transformer(MappedCheckpointWeights.load(dir), pool), ids, 100, mode);
                assertEquals(a.tokensScored(), b.tokensScored());
                // the same weights; products through another kernel agree within float round-off
                assertArrayEquals(a.nll(), b.nll(), 1e-4, mode.id());
            }
        }
    }
}
