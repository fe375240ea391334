package qlab.engine.gguf;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.IntFunction;
import qlab.engine.QlabException;
import qlab.engine.model.Model;
import qlab.engine.model.ModelConfig;
import qlab.engine.model.ModelManifest;
import qlab.engine.model.WeightSource;
import qlab.engine.model.Weights;
import qlab.engine.tensor.F32Matrix;
import qlab.engine.tensor.Matrix;

/**
 * A GGUF file read as a qlab model: its config from the hyperparameters, its tensors under qlab's
 * names, each checked against what the config needs. This class widens F32, F16 and BF16 tensors
 * to f32 exactly, as a safetensors checkpoint loads; quantized tensors are read by the
 * quantization module, which builds on {@link #matrix}.
 */
public final class GgufModel {

    private final GgufFile file;
    private final GgufArchitecture architecture;
    private final ModelConfig config;
    /** qlab name to llama.cpp tensor. */
    private final Map<String, GgufTensor> tensors;

    private GgufModel(GgufFile file) {
        this.file = file;
        this.architecture = GgufModelConfig.architecture(file);
        this.config = GgufModelConfig.read(file);
        Map<String, GgufTensor> byQlab = new LinkedHashMap<>();
        for (GgufTensor t : file.tensors().values()) {
            if (t.name().equals(GgufArchitecture.ROPE_FREQS)) {
                continue; // read into the config's RoPE scaling
            }
            String name = architecture.qlabName(t.name()).orElseThrow(() -> new QlabException(file.source()
                    + ": tensor " + GgufFile.quoted(t.name()) + " is not a tensor of a " + architecture.name() + " model"));
            byQlab.put(name, t);
        }
        this.tensors = byQlab;
        Map<String, long[]> shapes = new LinkedHashMap<>();
        byQlab.forEach((name, t) -> shapes.put(name, t.shape()));
        List<String> problems = ModelManifest.of(config).problems(shapes);
        if (!problems.isEmpty()) {
            List<String> named = new ArrayList<>();
            for (String p : problems.subList(0, Math.min(3, problems.size()))) {
                named.add(renameToGguf(p));
            }
            throw new QlabException(file.source() + ": the tensors do not match the hyperparameters (" + problems.size()
                    + " problem(s)): " + String.join("; ", named));
        }
    }

    /** Opens a file whose tensor types {@code types} knows (see {@link GgufTensorType}). */
    public static GgufModel open(Path path, IntFunction<GgufTensorType> types) {
        return new GgufModel(GgufFile.open(path, types));
    }

    public static GgufModel of(GgufFile file) {
        return new GgufModel(file);
    }

    /** Loads a GGUF whose weights are all F32, F16 or BF16, as an f32 model. */
    public static Model load(Path path) {
        GgufModel m = open(path, GgufTensorType.FLOATS);
        return new Model(m.config, Weights.load(m.config, m.floatSource()), path.toString());
    }

    private String renameToGguf(String problem) {
        String out = problem;
        for (String word : problem.split(" ")) {
            Optional<String> g = architecture.ggufName(word);
            if (g.isPresent()) {
                out = out.replace(word, g.get());
            }
        }
        return out;
    }

    public GgufFile file() {
        return file;
    }

    public GgufArchitecture architecture() {
        return architecture;
    }

    public ModelConfig config() {
        return config;
    }

    /** The llama.cpp tensor behind a qlab tensor name. */
    public GgufTensor tensor(String qlabName) {
        GgufTensor t = tensors.get(qlabName);
        if (t == null) {
            throw new QlabException(file.source() + ": no tensor \"" + architecture.ggufName(qlabName).orElse(qlabName) + "\"");
        }
        return t;
    }

    /** The tensor checked against the shape the config needs (row-major: [rows, cols] or [length]). */
    public GgufTensor checked(String qlabName, long... shape) {
        GgufTensor t = tensor(qlabName);
        if (!Arrays.equals(t.shape(), shape)) {
            throw new QlabException(file.source() + ": tensor \"" + t.name() + "\": field \"ne\" is " + Arrays.toString(t.ne())
                    + ", expected " + Arrays.toString(new GgufTensor(t.name(), shape, t.type(), 0, 0).shape()));
        }
        return t;
    }

    /**
     * The file's row order of a tensor (see {@link GgufArchitecture#ggufRowOrder}): row {@code r}
     * in the file is row {@code order[r]} of the model's; empty when the two agree.
     */
    public Optional<int[]> ggufRowOrder(String qlabName) {
        return architecture.ggufRowOrder(qlabName, config);
    }

    /** A 1-D tensor (norm weight or bias) as f32, in the model's order; it must be a float type. */
    public float[] vector(String qlabName, int length) {
        float[] v = file.floats(checked(qlabName, length).name());
        Optional<int[]> order = ggufRowOrder(qlabName);
        return order.isPresent() ? GgufArchitecture.reorderRows(v, 1, order.get(), false) : v;
    }

    /** A float-typed matrix widened to f32, its rows in the model's order. */
    public Matrix floatMatrix(String qlabName, int rows, int cols) {
        GgufTensor t = checked(qlabName, rows, cols);
        float[] v = file.floats(t.name());
        Optional<int[]> order = ggufRowOrder(qlabName);
        return new F32Matrix(order.isPresent() ? GgufArchitecture.reorderRows(v, cols, order.get(), false) : v, rows, cols);
    }

    /** The chat template of {@code tokenizer.chat_template}, if the file has one. */
    public Optional<String> chatTemplate() {
        return file.has("tokenizer.chat_template") ? Optional.of(file.string("tokenizer.chat_template")) : Optional.empty();
    }

    /** Weights read by {@link #floatMatrix} and {@link #vector}. */
    public WeightSource floatSource() {
        return new WeightSource() {
            @Override
            public Matrix matrix(String name, int rows, int cols) {
                return floatMatrix(name, rows, cols);
            }

            @Override
            public float[] vector(String name, int length) {
                return GgufModel.this.vector(name, length);
            }

            @Override
            public String describe() {
                return file.source();
            }
        };
    }
}
