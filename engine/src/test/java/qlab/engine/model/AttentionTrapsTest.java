package qlab.engine.model;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import qlab.engine.testing.Fixtures;
import qlab.engine.util.WorkerPool;

/**
 * Attention bugs never fail loudly. Each classic one is implemented on purpose in the reference
 * ({@link ReferenceModel.Variant}) and shown to give different, finite logits that the goldens
 * reject, while the right arithmetic matches them.
 */
class AttentionTrapsTest {

    private static final Path BF16 = Path.of("tiny-qwen2", "bf16");

    private static double maxDiffToGolden(ReferenceModel.Variant variant, String seqName) {
        Path dir = Fixtures.oracle().resolve(BF16);
        Model model = Model.load(dir);
        JsonNode seq = null;
        for (JsonNode s : Fixtures.json(dir.resolve("golden/manifest.json")).get("sequences")) {
            if (s.get("name").textValue().equals(seqName)) {
                seq = s;
            }
        }
        int[] ids = Fixtures.ints(seq.get("input_ids"));
        double[] golden = Fixtures.f64(dir.resolve(seq.get("logits_f64").get("file").textValue()));
        double[][] got = new ReferenceModel(model, variant).logits(ids);
        int vocab = model.config().vocabSize();
        double worst = 0;
        for (int t = 0; t < ids.length; t++) {
            for (int j = 0; j < vocab; j++) {
                assertTrue(Double.isFinite(got[t][j]), variant + " gave a non-finite logit");
                worst = Math.max(worst, Math.abs(got[t][j] - golden[t * vocab + j]));
            }
        }
        return worst;
    }

    @Test
    void onlyTheRightConventionsMatchTheGoldens() {
        double right = maxDiffToGolden(ReferenceModel.Variant.QWEN2, "seq2_len33");
        assertTrue(right < 1e-9, "Qwen2 arithmetic vs golden: " + right);
        for (ReferenceModel.Variant wrong : new ReferenceModel.Variant[] {
                ReferenceModel.Variant.INTERLEAVED_ROPE,
                ReferenceModel.Variant.TILED_KV_HEADS,
                ReferenceModel.Variant.MASK_WITHOUT_DIAGONAL}) {
            double d = maxDiffToGolden(wrong, "seq2_len33");
            System.out.printf("%s differs from the golden by up to %.3g%n", wrong, d);
            assertTrue(d > 1e-2, wrong + " should differ from the golden, max diff " + d);
        }
    }

    @Test
    void aDecodeStepAtPositionZeroInsteadOfTheCacheLengthDiffers() {
        Model model = Model.load(Fixtures.oracle().resolve(BF16));
        try (WorkerPool pool = new WorkerPool(1)) {
            Transformer tf = new Transformer(model, pool);
            int[] prompt = {5, 900, 17, 333, 41};
            KvCache cache = tf.newCache(16);
            tf.forward(prompt, cache, false);
            float[] right = tf.forward(new int[] {77}, cache, false); // position 5, attends to the prompt
            float[] restarted = tf.forward(new int[] {77}, tf.newCache(16), false); // position 0, alone
            double d = 0;
            for (int i = 0; i < right.length; i++) {
                assertTrue(Float.isFinite(right[i]) && Float.isFinite(restarted[i]));
                d = Math.max(d, Math.abs(right[i] - restarted[i]));
            }
            assertTrue(d > 1e-2, "position must matter: max diff " + d);
            // and the right one is what the reference computes for the whole sequence
            double[][] ref = new ReferenceModel(model).logits(new int[] {5, 900, 17, 333, 41, 77});
            for (int i = 0; i < right.length; i++) {
                assertTrue(Math.abs(right[i] - ref[5][i]) < 1e-4, "logit " + i);
            }
        }
    }
}
