package qlab.engine.train;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import qlab.engine.QlabException;
import qlab.engine.model.Model;
import qlab.engine.model.ModelConfig;
import qlab.engine.model.ModelManifest;
import qlab.engine.model.WeightSource;
import qlab.engine.model.Weights;
import qlab.engine.safetensors.DType;
import qlab.engine.safetensors.SafetensorsFile;
import qlab.engine.safetensors.SafetensorsWriter;
import qlab.engine.tensor.F32Matrix;
import qlab.engine.tensor.Matrix;

/**
 * Every tensor of a Qwen2 model as a plain f32 array, in the order and under the names of
 * {@link ModelManifest}: the weights being trained, or their gradients, or an optimizer moment.
 */
public final class Parameters {

    /** One tensor: matrices [rows, cols] row-major, vectors [n]. Weight decay applies to matrices only. */
    public record Tensor(String name, long[] shape, float[] data) {
        public boolean isMatrix() {
            return shape.length == 2;
        }

        public int rows() {
            return (int) shape[0];
        }

        public int cols() {
            return (int) shape[shape.length - 1];
        }
    }

    private final ModelConfig config;
    private final Map<String, Tensor> tensors;

    private Parameters(ModelConfig config, Map<String, Tensor> tensors) {
        this.config = config;
        this.tensors = Collections.unmodifiableMap(tensors);
    }

    /** All tensors zero. */
    public static Parameters zeros(ModelConfig c) {
        Map<String, Tensor> m = new LinkedHashMap<>();
        for (var e : ModelManifest.of(c).expected().entrySet()) {
            long n = 1;
            for (long d : e.getValue()) {
                n *= d;
            }
            if (n > Integer.MAX_VALUE - 8) {
                throw new QlabException("config.json: tensor " + e.getKey() + " has " + n + " elements, more than one array holds");
            }
            m.put(e.getKey(), new Tensor(e.getKey(), e.getValue(), new float[(int) n]));
        }
        return new Parameters(c, m);
    }

    /**
     * A fresh model: matrices and embeddings normal(0, 0.02), the projections that write into the
     * residual stream (o_proj, down_proj) scaled by 1/√(2 × layers) so the stream's variance does not
     * grow with depth; norms one, biases zero. One generator draws every tensor in manifest order.
     */
    public static Parameters init(ModelConfig c, long seed) {
        Parameters p = zeros(c);
        SplitMix64 rng = new SplitMix64(seed);
        double residualScale = 1.0 / Math.sqrt(2.0 * c.numLayers());
        for (Tensor t : p.list()) {
            float[] d = t.data();
            if (!t.isMatrix()) {
                if (t.name().endsWith("norm.weight")) {
                    java.util.Arrays.fill(d, 1f);
                }
                continue;
            }
            double std = 0.02;
            if (t.name().endsWith("o_proj.weight") || t.name().endsWith("down_proj.weight")) {
                std *= residualScale;
            }
            for (int i = 0; i < d.length; i++) {
                d[i] = (float) (std * rng.nextGaussian());
            }
        }
        return p;
    }

    public ModelConfig config() {
        return config;
    }

    public List<Tensor> list() {
        return new ArrayList<>(tensors.values());
    }

    public Tensor tensor(String name) {
        Tensor t = tensors.get(name);
        if (t == null) {
            throw new IllegalArgumentException("no tensor " + name);
        }
        return t;
    }

    public float[] get(String name) {
        return tensor(name).data();
    }

    public float[] layer(int i, String suffix) {
        return get(ModelManifest.layer(i, suffix));
    }

    /** The LM head's array: the embedding's when they are tied. */
    public float[] head() {
        return config.tieWordEmbeddings() ? get(ModelManifest.EMBED) : get(ModelManifest.LM_HEAD);
    }

    public long count() {
        long n = 0;
        for (Tensor t : tensors.values()) {
            n += t.data().length;
        }
        return n;
    }

    /** Copies every value of {@code other} (same config) into this. */
    public void copyFrom(Parameters other) {
        for (Tensor t : tensors.values()) {
            float[] src = other.get(t.name());
            System.arraycopy(src, 0, t.data(), 0, src.length);
        }
    }

    /** A deep copy. */
    public Parameters copy() {
        Parameters p = zeros(config);
        p.copyFrom(this);
        return p;
    }

    /** The weights as an engine model (f32 matrices over these very arrays, not copies). */
    public Model toModel() {
        WeightSource src = new WeightSource() {
            @Override
            public Matrix matrix(String name, int rows, int cols) {
                return new F32Matrix(get(name), rows, cols);
            }

            @Override
            public float[] vector(String name, int length) {
                return get(name);
            }

            @Override
            public String describe() {
                return "training parameters";
            }
        };
        return new Model(config, Weights.load(config, src), "training parameters");
    }

    /** Adds every tensor to {@code w} under {@code prefix + name}, stored as {@code dtype}. */
    public void addTo(SafetensorsWriter w, String prefix, DType dtype) {
        for (Tensor t : tensors.values()) {
            w.addFloats(prefix + t.name(), dtype, t.shape(), t.data());
        }
    }

    /** Writes a Hugging Face {@code model.safetensors} of these weights. */
    public void writeSafetensors(Path file, DType dtype) {
        SafetensorsWriter w = new SafetensorsWriter();
        w.metadata("format", "pt");
        addTo(w, "", dtype);
        w.write(file);
    }

    /** Reads every tensor {@code prefix + name} of {@code file} into this (shapes must match). */
    public void readFrom(SafetensorsFile file, String prefix) {
        for (Tensor t : tensors.values()) {
            String name = prefix + t.name();
            if (!file.tensors().containsKey(name)) {
                throw new QlabException(file.path() + ": tensor \"" + name + "\" is missing");
            }
            float[] v = file.floats(name);
            if (v.length != t.data().length) {
                throw new QlabException(file.path() + ": tensor \"" + name + "\" has " + v.length + " values, expected "
                        + t.data().length);
            }
            System.arraycopy(v, 0, t.data(), 0, v.length);
        }
    }
}
