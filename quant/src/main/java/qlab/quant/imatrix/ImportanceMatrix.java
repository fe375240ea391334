package qlab.quant.imatrix;

import static qlab.engine.model.ModelManifest.layer;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import qlab.engine.QlabException;
import qlab.engine.model.ActivationObserver;
import qlab.engine.model.KvCache;
import qlab.engine.model.ModelConfig;
import qlab.engine.model.ModelManifest;
import qlab.engine.model.Transformer;
import qlab.engine.safetensors.DType;
import qlab.engine.safetensors.SafetensorsFile;
import qlab.engine.safetensors.SafetensorsWriter;
import qlab.engine.safetensors.TensorInfo;
import qlab.engine.util.Progress;

/**
 * For every weight matrix that gets quantized, the mean squared activation of each of its input
 * channels over calibration text: E[x_j^2]. Quantizing row w to minimise
 * sum_j E[x_j^2] (w_j - q_j)^2 minimises the expected squared error of the matrix product, which
 * is what the model feels; plain quantization weighs every channel alike.
 *
 * <p>File format: a safetensors file (so one reader serves it and other tools can open it). One
 * F32 tensor [in_features] per weight matrix, named as the matrix (e.g.
 * {@code model.layers.0.self_attn.q_proj.weight}; q/k/v share an input and so share values, as do
 * gate/up). {@code __metadata__}: {@code format} = {@code qlab-imatrix-v1}, {@code tokens} (count
 * of calibration tokens), {@code texts} (comma-separated sha256 of each calibration text's token
 * ids), {@code model_hash}, {@code ctx}.
 */
public final class ImportanceMatrix {

    public static final String FORMAT = "qlab-imatrix-v1";

    private final Map<String, float[]> values;
    private final Map<String, String> metadata;

    public ImportanceMatrix(Map<String, float[]> values, Map<String, String> metadata) {
        this.values = Collections.unmodifiableMap(new LinkedHashMap<>(values));
        this.metadata = Collections.unmodifiableMap(new LinkedHashMap<>(metadata));
    }

    /** Mean squared input activation per channel for this weight matrix, or null if not recorded. */
    public float[] forMatrix(String name) {
        return values.get(name);
    }

    public Map<String, float[]> values() {
        return values;
    }

    public Map<String, String> metadata() {
        return metadata;
    }

    public long tokens() {
        return Long.parseLong(metadata.getOrDefault("tokens", "0"));
    }

    // ----------------------------------------------------------------------------------------

    /** Accumulates sums of squares per (site, layer) while a model runs. */
    private static final class Accumulator implements ActivationObserver {
        final Map<String, double[]> sums = new LinkedHashMap<>();
        final Map<String, long[]> counts = new LinkedHashMap<>();

        @Override
        public void observe(int layer, Site site, float[] x, int rows, int cols) {
            String key = site + "/" + layer;
            double[] s = sums.computeIfAbsent(key, k -> new double[cols]);
            counts.computeIfAbsent(key, k -> new long[1])[0] += rows;
            for (int r = 0; r < rows; r++) {
                int o = r * cols;
                for (int j = 0; j < cols; j++) {
                    double v = x[o + j];
                    s[j] += v * v;
                }
            }
        }

        float[] mean(String key) {
            double[] s = sums.get(key);
            long n = counts.get(key)[0];
            float[] m = new float[s.length];
            for (int j = 0; j < s.length; j++) {
                m[j] = (float) (s[j] / n);
            }
            return m;
        }
    }

    /**
     * Runs the model over each calibration text in non-overlapping windows of ctx tokens and
     * records every matrix input.
     */
    public static ImportanceMatrix calibrate(Transformer model, List<int[]> texts, List<String> textHashes, int ctx, String modelHash) {
        return calibrate(model, texts, textHashes, ctx, modelHash, Progress.NONE);
    }

    /** {@link #calibrate}, reporting each window's tokens to {@code progress} as it is done. */
    public static ImportanceMatrix calibrate(Transformer model, List<int[]> texts, List<String> textHashes, int ctx,
                                             String modelHash, Progress progress) {
        if (texts.isEmpty()) {
            throw new QlabException("calibration needs at least one text");
        }
        ModelConfig c = model.config();
        Accumulator acc = new Accumulator();
        KvCache cache = model.newCache(ctx);
        long tokens = 0;
        model.observe(acc);
        try {
            for (int[] text : texts) {
                for (int start = 0; start < text.length; start += ctx) {
                    int[] window = Arrays.copyOfRange(text, start, Math.min(text.length, start + ctx));
                    cache.clear();
                    model.forward(window, cache, 0);
                    tokens += window.length;
                    progress.advance(window.length);
                }
            }
        } finally {
            model.observe(null);
        }
        if (tokens == 0) {
            throw new QlabException("the calibration text is empty");
        }
        Map<String, float[]> v = new LinkedHashMap<>();
        for (int l = 0; l < c.numLayers(); l++) {
            float[] attnIn = acc.mean(ActivationObserver.Site.ATTN_INPUT + "/" + l);
            v.put(layer(l, "self_attn.q_proj.weight"), attnIn);
            v.put(layer(l, "self_attn.k_proj.weight"), attnIn);
            v.put(layer(l, "self_attn.v_proj.weight"), attnIn);
            v.put(layer(l, "self_attn.o_proj.weight"), acc.mean(ActivationObserver.Site.ATTN_OUTPUT + "/" + l));
            float[] mlpIn = acc.mean(ActivationObserver.Site.MLP_INPUT + "/" + l);
            v.put(layer(l, "mlp.gate_proj.weight"), mlpIn);
            v.put(layer(l, "mlp.up_proj.weight"), mlpIn);
            v.put(layer(l, "mlp.down_proj.weight"), acc.mean(ActivationObserver.Site.MLP_HIDDEN + "/" + l));
        }
        v.put(c.tieWordEmbeddings() ? ModelManifest.EMBED : ModelManifest.LM_HEAD, acc.mean(ActivationObserver.Site.HEAD_INPUT + "/-1"));
        Map<String, String> meta = new LinkedHashMap<>();
        meta.put("format", FORMAT);
        meta.put("tokens", Long.toString(tokens));
        meta.put("texts", String.join(",", textHashes));
        meta.put("model_hash", modelHash);
        meta.put("ctx", Integer.toString(ctx));
        return new ImportanceMatrix(v, meta);
    }

    public void save(Path out) {
        SafetensorsWriter w = new SafetensorsWriter();
        metadata.forEach(w::metadata);
        for (var e : values.entrySet()) {
            w.addFloats(e.getKey(), DType.F32, new long[] {e.getValue().length}, e.getValue());
        }
        w.write(out);
    }

    public static ImportanceMatrix load(Path file) {
        SafetensorsFile f = SafetensorsFile.open(file);
        if (!FORMAT.equals(f.metadata().get("format"))) {
            String format = f.metadata().get("format");
            throw new QlabException(file + ": field \"__metadata__.format\" is "
                    + (format == null ? "missing" : new com.fasterxml.jackson.databind.node.TextNode(format).toString())
                    + ", expected \"" + FORMAT + "\" (not a qlab importance matrix)");
        }
        String tokens = f.metadata().getOrDefault("tokens", "0");
        if (!tokens.matches("[0-9]{1,18}")) {
            throw new QlabException(file + ": field \"__metadata__.tokens\" is " + new com.fasterxml.jackson.databind.node.TextNode(tokens) + ", expected a token count");
        }
        Map<String, float[]> v = new LinkedHashMap<>();
        for (TensorInfo t : f.tensors().values()) {
            if (t.shape().length != 1 || t.dtype() != DType.F32) {
                throw new QlabException(file + ": tensor \"" + t.name() + "\" must be a 1-D F32 vector");
            }
            v.put(t.name(), f.floats(t.name()));
        }
        return new ImportanceMatrix(v, f.metadata());
    }

    /**
     * Checks every recorded vector against the model's matrices: a name the model lacks, or an
     * input width that differs, means the file was calibrated on another model.
     */
    public void checkAgainst(ModelConfig c, Path file) {
        Map<String, long[]> shapes = ModelManifest.of(c).expected();
        List<String> problems = new ArrayList<>();
        for (var e : values.entrySet()) {
            long[] s = shapes.get(e.getKey());
            if (s == null || s.length != 2) {
                problems.add("\"" + e.getKey() + "\" is not a matrix of this model");
            } else if (s[1] != e.getValue().length) {
                problems.add("\"" + e.getKey() + "\" has " + e.getValue().length + " channels, the model's matrix has " + s[1]);
            }
        }
        if (!problems.isEmpty()) {
            throw new QlabException(file + ": importance matrix from a different model: " + problems.size()
                    + " mismatch(es), e.g. " + problems.get(0));
        }
    }
}
