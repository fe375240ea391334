package qlab.quant.imatrix;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import qlab.engine.QlabException;
import qlab.engine.eval.KlDivergence;
import qlab.engine.eval.LogProbBaseline;
import qlab.engine.eval.ScoringMode;
import qlab.engine.model.ActivationObserver;
import qlab.engine.model.Model;
import qlab.engine.model.ModelManifest;
import qlab.engine.model.Transformer;
import qlab.engine.synthetic.SyntheticPreset;
import qlab.engine.tensor.Matrix;
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

    /**
     * On the synthetic SMALL preset (seed 9; calibration and evaluation on different random ids).
     * The model-level KL claim is asserted for q4_0, where it holds robustly: the imatrix lowered
     * q4_0's KL on each of ten model seeds tried (this one and nine others). It is not asserted
     * for other formats because on this model KL does not follow the weight error closely enough
     * for one seed to decide: a uniform importance, which only lowers the plain squared error,
     * moves q2_8's KL by anything from -2.7 (seed 3) to +1.6 nats (seed 10); the imatrix lowered
     * q2_8's KL on 3 of 7 seeds and q2_0's on 5 of 7 (the 2-bit model is destroyed: KL 3 to 10
     * nats), and even q8_0's on only 3 of 4. For the 2-bit formats the test asserts what the
     * imatrix optimises: the error of every matrix's output on held-out activations, relative to
     * the output itself.
     */
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
            for (String format : new String[] {"q4_0"}) {
                double plain = KlDivergence.compare(new Transformer(QuantizedCheckpoint.quantize(m, QuantPlan.parse(format), null, pool), pool),
                        b, eval, 256, ScoringMode.SECOND_HALF).kl().mean();
                double weighted = KlDivergence.compare(new Transformer(QuantizedCheckpoint.quantize(m, QuantPlan.parse(format), im, pool), pool),
                        b, eval, 256, ScoringMode.SECOND_HALF).kl().mean();
                System.out.printf("%s: KL plain %.5f, with imatrix %.5f%n", format, plain, weighted);
                assertTrue(weighted < plain, format + ": imatrix KL " + weighted + " should be below plain " + plain);
            }
            Map<String, float[]> inputs = matrixInputs(base, java.util.Arrays.copyOf(eval, 256));
            for (String format : new String[] {"q2_8", "q2_0"}) {
                double plain = meanRelativeOutputError(m, QuantizedCheckpoint.quantize(m, QuantPlan.parse(format), null, pool), inputs);
                double weighted = meanRelativeOutputError(m, QuantizedCheckpoint.quantize(m, QuantPlan.parse(format), im, pool), inputs);
                System.out.printf("%s: held-out relative output error plain %.6f, with imatrix %.6f%n", format, plain, weighted);
                assertTrue(weighted < plain, format + ": imatrix output error " + weighted + " should be below plain " + plain);
            }
        }
    }

    /** Every weight matrix of the model with the site/layer key of its recorded input. */
    private static Map<String, Matrix> matricesBySite(Model model) {
        Map<String, Matrix> out = new LinkedHashMap<>();
        var w = model.weights();
        for (int l = 0; l < model.config().numLayers(); l++) {
            var L = w.layers()[l];
            out.put(ActivationObserver.Site.ATTN_INPUT + "/" + l + "/q", L.q());
            out.put(ActivationObserver.Site.ATTN_INPUT + "/" + l + "/k", L.k());
            out.put(ActivationObserver.Site.ATTN_INPUT + "/" + l + "/v", L.v());
            out.put(ActivationObserver.Site.ATTN_OUTPUT + "/" + l + "/o", L.o());
            out.put(ActivationObserver.Site.MLP_INPUT + "/" + l + "/gate", L.gate());
            out.put(ActivationObserver.Site.MLP_INPUT + "/" + l + "/up", L.up());
            out.put(ActivationObserver.Site.MLP_HIDDEN + "/" + l + "/down", L.down());
        }
        out.put(ActivationObserver.Site.HEAD_INPUT + "/-1/head", w.lmHead());
        return out;
    }

    /** The input rows of every matrix group while the model reads {@code tokens}, keyed site/layer. */
    private static Map<String, float[]> matrixInputs(Transformer model, int[] tokens) {
        Map<String, float[]> inputs = new LinkedHashMap<>();
        model.observe((layer, site, x, rows, cols) -> inputs.put(site + "/" + layer, java.util.Arrays.copyOf(x, rows * cols)));
        try {
            model.forward(tokens, model.newCache(tokens.length), 0);
        } finally {
            model.observe(null);
        }
        return inputs;
    }

    /** Mean over matrices of sum ||x (W - Q)^T||^2 / sum ||x W^T||^2 over the recorded inputs x. */
    private static double meanRelativeOutputError(Model original, Model quantized, Map<String, float[]> inputs) {
        Map<String, Matrix> w = matricesBySite(original);
        Map<String, Matrix> q = matricesBySite(quantized);
        double sum = 0;
        for (var e : w.entrySet()) {
            String site = e.getKey().substring(0, e.getKey().lastIndexOf('/'));
            float[] x = inputs.get(site);
            Matrix wm = e.getValue();
            int cols = wm.cols();
            int n = x.length / cols;
            float[] wr = new float[cols];
            float[] qr = new float[cols];
            double err = 0;
            double out = 0;
            for (int r = 0; r < wm.rows(); r++) {
                wm.copyRow(r, wr, 0);
                q.get(e.getKey()).copyRow(r, qr, 0);
                for (int t = 0; t < n; t++) {
                    double y = 0;
                    double d = 0;
                    for (int j = 0; j < cols; j++) {
                        y += wr[j] * x[t * cols + j];
                        d += (wr[j] - qr[j]) * x[t * cols + j];
                    }
                    err += d * d;
                    out += y * y;
                }
            }
            sum += err / out;
        }
        return sum / w.size();
    }
}
