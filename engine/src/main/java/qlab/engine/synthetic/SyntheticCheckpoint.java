package qlab.engine.synthetic;

import static qlab.engine.model.ModelManifest.layer;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.IntStream;
import qlab.engine.QlabException;
import qlab.engine.model.ModelConfig;
import qlab.engine.model.ModelManifest;
import qlab.engine.safetensors.Checkpoint;
import qlab.engine.safetensors.DType;
import qlab.engine.safetensors.SafetensorsWriter;
import qlab.engine.util.IoErrors;
import qlab.engine.util.OutputPaths;

/**
 * Writes a deterministic synthetic checkpoint of any supported family in Hugging Face layout (config.json +
 * model.safetensors in BF16): the same seed gives the same bytes, on any number of threads.
 *
 * <p>The weights imitate the statistics that make quantization of real LLMs hard, rather than
 * white noise: heavy-tailed values (a small share of entries 3x wider), per-row scale variation,
 * a few input channels of every matrix tens of times larger than the rest, RMSNorm weights around
 * 1 with a few large channels shared by all layers (so the activations feeding q/k/v and gate/up
 * have outlier channels, which is what importance matrices exploit), non-trivial biases with some
 * large key biases, and a final norm of 2.5 that makes the next-token distribution moderately peaked.
 */
public final class SyntheticCheckpoint {

    private static final int ROWS_PER_CHUNK = 64;

    private final ModelConfig config;
    private final long seed;
    private final int[] activationOutliers;
    private final int usedVocab;

    public SyntheticCheckpoint(ModelConfig config, long seed) {
        this(config, seed, config.vocabSize());
    }

    /**
     * @param usedVocab ids at and above this have no token in the tokenizer that goes with the
     *                  model; their embedding rows are scaled down (as a real model's untrained
     *                  padding rows are small), so a tied head rarely predicts them
     */
    public SyntheticCheckpoint(ModelConfig config, long seed, int usedVocab) {
        this.config = config;
        this.seed = seed;
        this.usedVocab = Math.min(usedVocab, config.vocabSize());
        SplittableRandom r = rng("activation-outliers", -1);
        int n = Math.max(1, config.hiddenSize() / 200);
        this.activationOutliers = r.ints(0, config.hiddenSize()).distinct().limit(n).toArray();
    }

    /** Writes config.json and model.safetensors into {@code dir}. */
    public void write(Path dir) {
        OutputPaths.prepareDirectory(dir);
        try {
            Files.writeString(dir.resolve("config.json"), config.toJson());
        } catch (IOException e) {
            throw new QlabException(dir.resolve("config.json") + ": cannot write: " + IoErrors.why(e));
        }
        SafetensorsWriter w = new SafetensorsWriter();
        w.metadata("format", "pt");
        w.metadata("qlab.synthetic.seed", Long.toString(seed));
        // Tensors sorted by name, as Hugging Face's writer does.
        for (Map.Entry<String, long[]> e : new java.util.TreeMap<>(ModelManifest.of(config).expected()).entrySet()) {
            w.add(e.getKey(), DType.BF16, e.getValue(), new LazyBf16(e.getKey(), e.getValue()));
        }
        w.write(dir.resolve(Checkpoint.SINGLE));
    }

    /** The f32 values of one tensor (before BF16 rounding). */
    public float[] values(String name, long[] shape) {
        int rows = (int) shape[0];
        int cols = shape.length > 1 ? (int) shape[1] : 1;
        float[] out = new float[Math.multiplyExact(rows, cols)];
        if (shape.length == 1) {
            vector(name, out);
            return out;
        }
        boolean vocabulary = name.equals(ModelManifest.EMBED) || name.equals(ModelManifest.LM_HEAD);
        double std = vocabulary ? 0.02 : gain(name) / Math.sqrt(cols);
        SplittableRandom pick = rng(name, -1);
        float[] colScale = new float[cols];
        java.util.Arrays.fill(colScale, 1f);
        if (!vocabulary) {
            // Outlier input channels in the projections, not in the vocabulary matrix: scaled columns of a
            // (tied) LM head would multiply the final hidden state's outlier channel into logits tens of nats wide.
            for (int c : pick.ints(0, cols).distinct().limit(Math.max(1, cols / 300)).toArray()) {
                colScale[c] = (float) (8 + 17 * pick.nextDouble());
            }
        }
        int chunks = (rows + ROWS_PER_CHUNK - 1) / ROWS_PER_CHUNK;
        IntStream.range(0, chunks).parallel().forEach(chunk -> {
            SplittableRandom r = rng(name, chunk);
            int end = Math.min(rows, (chunk + 1) * ROWS_PER_CHUNK);
            for (int row = chunk * ROWS_PER_CHUNK; row < end; row++) {
                double rowStd = std * Math.exp(0.2 * r.nextGaussian());
                int o = row * cols;
                for (int c = 0; c < cols; c++) {
                    double v = r.nextGaussian() * rowStd;
                    if (r.nextInt(50) == 0) {
                        v *= 3; // heavy tail
                    }
                    out[o + c] = (float) (v * colScale[c]);
                }
                if (row >= usedVocab && (name.equals(ModelManifest.EMBED) || name.equals(ModelManifest.LM_HEAD))) {
                    for (int c = 0; c < cols; c++) {
                        out[o + c] *= 0.05f;
                    }
                }
            }
        });
        return out;
    }

    private void vector(String name, float[] out) {
        SplittableRandom r = rng(name, 0);
        boolean norm = name.endsWith("layernorm.weight") || name.equals(ModelManifest.FINAL_NORM);
        if (name.endsWith("q_norm.weight") || name.endsWith("k_norm.weight")) {
            // per-head norms (Qwen3): around 1, no outlier channels (those index the hidden dimension)
            for (int i = 0; i < out.length; i++) {
                out[i] = (float) (1 + 0.1 * r.nextGaussian());
            }
        } else if (norm) {
            double center = name.equals(ModelManifest.FINAL_NORM) ? 2.5 : 1.0;
            for (int i = 0; i < out.length; i++) {
                out[i] = (float) (center * (1 + 0.1 * r.nextGaussian()));
            }
            if (!name.equals(ModelManifest.FINAL_NORM)) {
                for (int c : activationOutliers) {
                    out[c] *= (float) (4 + 8 * r.nextDouble());
                }
            }
        } else if (name.endsWith("k_proj.bias")) {
            for (int i = 0; i < out.length; i++) {
                out[i] = (float) (0.2 * r.nextGaussian() * (r.nextInt(16) == 0 ? 6 : 1));
            }
        } else {
            double std = name.endsWith("q_proj.bias") ? 0.1 : 0.05;
            for (int i = 0; i < out.length; i++) {
                out[i] = (float) (std * r.nextGaussian());
            }
        }
    }

    /**
     * Standard deviation times sqrt(fan-in) per matrix. Chosen by measuring KL divergence of
     * quantized copies of the small preset against a few values: with 0.6 everywhere and a final
     * norm of 4, random attention and residual updates were so sharp that q4_0 lost 0.8 nats per
     * token (trained models lose a few hundredths); these gains give q8_0 ~0.001, q4_0 ~0.07 and
     * q2_8 ~0.6 nats on that preset, the magnitudes seen on trained models.
     */
    private static double gain(String name) {
        if (name.endsWith("q_proj.weight") || name.endsWith("k_proj.weight")) {
            return 0.3; // softer attention: random sharp attention amplifies any perturbation
        }
        if (name.endsWith("o_proj.weight") || name.endsWith("down_proj.weight")) {
            return 0.3; // residual updates small next to the stream, as in trained models
        }
        return 0.6;
    }

    /** A generator for one (tensor, chunk): the stream depends on nothing but the seed and names. */
    private SplittableRandom rng(String name, int chunk) {
        long h = 0xcbf29ce484222325L; // FNV-1a over the name's chars
        for (int i = 0; i < name.length(); i++) {
            h = (h ^ name.charAt(i)) * 0x100000001b3L;
        }
        return new SplittableRandom(mix(mix(seed) ^ h) ^ mix(chunk + 0x9E3779B97F4A7C15L));
    }

    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }

    /** Generates a tensor when the writer first asks for its bytes, and drops it after the last. */
    private final class LazyBf16 implements SafetensorsWriter.Payload {
        private final String name;
        private final long[] shape;
        private float[] data;

        LazyBf16(String name, long[] shape) {
            this.name = name;
            this.shape = shape;
        }

        @Override
        public void fill(long offset, ByteBuffer buf) {
            if (data == null) {
                data = values(name, shape);
            }
            int i = (int) (offset / 2);
            while (buf.hasRemaining()) {
                buf.putShort(SafetensorsWriter.toBf16(data[i++]));
            }
            if (i == data.length) {
                data = null;
            }
        }
    }
}
