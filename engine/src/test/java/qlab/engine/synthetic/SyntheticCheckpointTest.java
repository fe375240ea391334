package qlab.engine.synthetic;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import qlab.engine.QlabException;
import qlab.engine.model.Model;
import qlab.engine.model.ModelManifest;
import qlab.engine.safetensors.Checkpoint;
import qlab.engine.testing.TestModels;

class SyntheticCheckpointTest {

    @TempDir
    Path tmp;

    @Test
    void sameSeedSameBytesOtherSeedOtherBytes() throws IOException {
        new SyntheticCheckpoint(SyntheticPreset.TINY.config(), 3).write(tmp.resolve("a"));
        new SyntheticCheckpoint(SyntheticPreset.TINY.config(), 3).write(tmp.resolve("b"));
        new SyntheticCheckpoint(SyntheticPreset.TINY.config(), 4).write(tmp.resolve("c"));
        byte[] a = Files.readAllBytes(tmp.resolve("a/model.safetensors"));
        assertArrayEquals(a, Files.readAllBytes(tmp.resolve("b/model.safetensors")));
        assertFalse(java.util.Arrays.equals(a, Files.readAllBytes(tmp.resolve("c/model.safetensors"))));
        assertEquals(Files.readString(tmp.resolve("a/config.json")), Files.readString(tmp.resolve("b/config.json")));
        Model m = Model.load(tmp.resolve("a"));
        assertEquals(SyntheticPreset.TINY.config(), m.config());
    }

    @Test
    void presetsHaveTheAdvertisedSizes() {
        assertEquals(494_032_768L, SyntheticPreset.QWEN25_05B.config().parameterCount());
        assertEquals(SyntheticPreset.QWEN25_05B, SyntheticPreset.byId("qwen2.5-0.5b"));
        assertTrue(assertThrows(QlabException.class, () -> SyntheticPreset.byId("7b")).getMessage().contains("qwen2.5-0.5b"));
    }

    @Test
    void weightsHaveOutlierChannelsAndNonTrivialNormsAndBiases() {
        new SyntheticCheckpoint(SyntheticPreset.SMALL.config(), 1).write(tmp.resolve("s"));
        Checkpoint ck = Checkpoint.open(tmp.resolve("s"));
        int cols = SyntheticPreset.SMALL.config().hiddenSize();
        float[] w = ck.floats(ModelManifest.layer(0, "mlp.gate_proj.weight"));
        int rows = w.length / cols;
        double[] colRms = new double[cols];
        for (int r = 0; r < rows; r++) {
            for (int c = 0; c < cols; c++) {
                colRms[c] += w[r * cols + c] * w[r * cols + c] / rows;
            }
        }
        double[] sorted = colRms.clone();
        java.util.Arrays.sort(sorted);
        double ratio = Math.sqrt(sorted[cols - 1] / sorted[cols / 2]);
        assertTrue(ratio > 5, "largest input channel should be several times the median: " + ratio);
        float[] norm = ck.floats(ModelManifest.layer(0, "input_layernorm.weight"));
        float max = 0;
        for (float v : norm) {
            max = Math.max(max, v);
        }
        assertTrue(max > 3, "norm weights should have large channels: " + max);
        float[] kb = ck.floats(ModelManifest.layer(0, "self_attn.k_proj.bias"));
        double rms = 0;
        for (float v : kb) {
            rms += v * v / kb.length;
        }
        assertTrue(Math.sqrt(rms) > 0.2, "key biases are non-trivial");
    }

    @Test
    void qwen3HeadNormsAreAroundOneAndLlamaBiasesAreWritten() {
        new SyntheticCheckpoint(SyntheticPreset.TINY_QWEN3.config(), 1).write(tmp.resolve("q3"));
        Checkpoint q3 = Checkpoint.open(tmp.resolve("q3"));
        for (String norm : new String[] {"self_attn.q_norm.weight", "self_attn.k_norm.weight"}) {
            float[] w = q3.floats(ModelManifest.layer(1, norm));
            assertEquals(SyntheticPreset.TINY_QWEN3.config().headDim(), w.length);
            for (float v : w) {
                assertTrue(v > 0.5 && v < 1.5, norm + " " + v);
            }
        }
        new SyntheticCheckpoint(TestModels.llamaBiases(), 1).write(tmp.resolve("lb"));
        Checkpoint lb = Checkpoint.open(tmp.resolve("lb"));
        for (String bias : new String[] {"self_attn.o_proj.bias", "mlp.gate_proj.bias", "mlp.up_proj.bias", "mlp.down_proj.bias"}) {
            double rms = 0;
            float[] b = lb.floats(ModelManifest.layer(0, bias));
            for (float v : b) {
                rms += v * v / b.length;
            }
            assertTrue(Math.sqrt(rms) > 0.01 && Math.sqrt(rms) < 0.2, bias + " rms " + Math.sqrt(rms));
        }
    }
}
