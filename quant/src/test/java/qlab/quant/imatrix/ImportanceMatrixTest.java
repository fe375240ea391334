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
import qlab.engine.data.Datasets;
import qlab.engine.synthetic.SyntheticModelDirectory;
import qlab.engine.tokenizer.Tokenizer;
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
     * On the synthetic SMALL preset with its trained tokenizer: calibrated on 1,024 tokens of each
     * calibration text, scored on 1,024 tokens of the English evaluation text (which shares no
     * text with them), as `calibrate` and `kl` do from the command line. The KL claim is
     * asserted for a 4-bit and a 2-bit format where the gain is large (q4_0: 0.066 -> 0.057 nats,
     * tq2_8: 0.643 -> 0.466); for q2_8 and b1_8 the effect on this random model is within about 4%
     * either way, so for q2_8/q2_0 the test asserts what the imatrix optimises: the error of every
     * matrix's output on held-out activations, relative to the output itself.
     */
    @Test
    void calibratedQuantizationLowersKlOnAModelWithOutlierChannels() {
        Datasets data = Datasets.ofCheckout().orElseThrow(() -> new AssertionError("datasets/ not found (qlab.home)"));
        Path dir = tmp.resolve("small");
        SyntheticModelDirectory.write(SyntheticPreset.SMALL, 1, dir, java.util.Optional.of(data));
        Model m = Model.load(dir);
        Tokenizer tok = Tokenizer.load(dir);
        List<int[]> calib = new java.util.ArrayList<>();
        for (Datasets.Entry e : data.purpose("calibration")) {
            calib.add(java.util.Arrays.copyOf(tok.encode(e.read()), 1024));
        }
        int[] eval = java.util.Arrays.copyOf(tok.encode(data.byName("en-prose-eval").read()), 1024);
        try (WorkerPool pool = new WorkerPool(2)) {
            Transformer base = new Transformer(m, pool);
            ImportanceMatrix im = ImportanceMatrix.calibrate(base, calib, List.of("a", "b", "c"), 256, "small");
            LogProbBaseline b = LogProbBaseline.create(base, eval, 256, ScoringMode.SECOND_HALF, LogProbBaseline.Kind.FULL, 0, "k",
                    tmp.resolve("base.lpb"));
            for (String format : new String[] {"q4_0", "tq2_8"}) {
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
