package qlab.quant.checkpoint;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.lang.foreign.MemorySegment;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
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
import qlab.engine.safetensors.TensorInfo;
import qlab.engine.tensor.F32Matrix;
import qlab.engine.tensor.Matrix;
import qlab.engine.util.HugePages;
import qlab.engine.util.WorkerPool;
import qlab.quant.Formats;
import qlab.quant.QuantFormat;
import qlab.quant.QuantizedMatrix;
import qlab.quant.imatrix.ImportanceMatrix;
import qlab.engine.util.Progress;

/**
 * Quantized checkpoints: a model's weight matrices in block formats, in one memory-mappable
 * safetensors file. Each matrix is a raw U8 tensor of its packed rows (padded to a multiple of 64
 * bytes, so with a 64-byte-aligned data section every matrix starts 64-byte aligned and the
 * tensors stay contiguous, as the reference reader requires); norms and biases are F32 tensors
 * after them. {@code __metadata__} records the model config, the source model's hash, the plan,
 * the importance matrix used, and for each matrix its format, group, logical shape and bytes, so
 * the file is self-describing and other safetensors tools can open it.
 */
public final class QuantizedCheckpoint {

    public static final String FORMAT = "qlab-quantized-v1";
    private static final String TENSOR_KEY = "qlab.tensor.";
    private static final ObjectMapper JSON = new ObjectMapper();

    /** One matrix of a quantized model: where its format came from and what it costs. */
    public record TensorEntry(String name, String format, int group, int rows, int cols, long bytes, boolean padded) {
        public double bitsPerWeight() {
            return bytes * 8.0 / ((double) rows * cols);
        }
    }

    private QuantizedCheckpoint() {}

    /** True when the file is a qlab quantized checkpoint (by its metadata). */
    public static boolean isQuantized(Path file) {
        return FORMAT.equals(SafetensorsFile.open(file).metadata().get("format"));
    }

    /** Quantizes every weight matrix of an f32 model in memory, by the plan. Norms and biases stay f32. */
    public static Model quantize(Model source, QuantPlan plan, ImportanceMatrix importance, WorkerPool pool) {
        return quantize(source, plan, importance, pool, Progress.NONE);
    }

    /** {@link #quantize}, reporting each matrix's weights to {@code progress} once it is quantized. */
    public static Model quantize(Model source, QuantPlan plan, ImportanceMatrix importance, WorkerPool pool,
                                 Progress progress) {
        ModelConfig c = source.config();
        Weights w = source.weights();
        Map<String, Matrix> out = new LinkedHashMap<>();
        for (var e : w.matrices().entrySet()) {
            if (!(e.getValue() instanceof F32Matrix f)) {
                throw new QlabException(source.source() + ": tensor \"" + e.getKey() + "\" is already " + e.getValue().format()
                        + "; quantize from the original (f32/f16/bf16) model");
            }
            QuantFormat format = plan.choiceFor(e.getKey(), c, f.cols(), importance != null).resolve();
            float[] imp = importance == null ? null : importance.forMatrix(e.getKey());
            out.put(e.getKey(), QuantizedMatrix.quantize(format, f.data(), f.rows(), f.cols(), imp, pool));
            progress.advance((long) f.rows() * f.cols());
        }
        return new Model(c, Weights.load(c, new Source(out, w)), source.source() + " [" + plan + "]");
    }

    /** The quantized matrices of a model, with what each costs. */
    public static List<TensorEntry> entries(Model model) {
        List<TensorEntry> list = new ArrayList<>();
        for (var e : model.weights().matrices().entrySet()) {
            Matrix m = e.getValue();
            if (m instanceof QuantizedMatrix q) {
                QuantFormat f = q.quantFormat();
                list.add(new TensorEntry(e.getKey(), f.name(), f.groupSize(), m.rows(), m.cols(), q.storageBytes(),
                        f.groupSize() > 1 && m.cols() % f.groupSize() != 0));
            } else {
                list.add(new TensorEntry(e.getKey(), m.format(), 1, m.rows(), m.cols(), m.byteSize(), false));
            }
        }
        return list;
    }

    /** Writes a quantized model (from {@link #quantize}) to {@code out}, atomically. */
    public static void write(Model quantized, Map<String, String> provenance, Path out) {
        ModelConfig c = quantized.config();
        Weights w = quantized.weights();
        SafetensorsWriter writer = new SafetensorsWriter(64);
        writer.metadata("format", FORMAT);
        writer.metadata("qlab.config", c.toJson());
        provenance.forEach((k, v) -> writer.metadata("qlab." + k, v));
        for (TensorEntry t : entries(quantized)) {
            Matrix m = w.matrices().get(t.name());
            if (!(m instanceof QuantizedMatrix q)) {
                throw new IllegalArgumentException(t.name() + " is not quantized");
            }
            ObjectNode meta = JSON.createObjectNode();
            meta.put("format", t.format()).put("group", t.group()).put("rows", t.rows()).put("cols", t.cols())
                    .put("bytes", t.bytes()).put("padded", t.padded());
            writer.metadata(TENSOR_KEY + t.name(), meta.toString());
            MemorySegment data = q.data();
            long stored = (t.bytes() + 63) & ~63L;
            writer.add(t.name(), DType.U8, new long[] {stored}, (offset, buf) -> {
                while (buf.hasRemaining()) {
                    int n = (int) Math.min(buf.remaining(), Math.max(0, t.bytes() - offset));
                    if (n > 0) {
                        buf.put(data.asSlice(offset, n).asByteBuffer());
                        offset += n;
                    } else {
                        buf.put((byte) 0);
                        offset++;
                    }
                }
            });
        }
        for (var e : w.vectors().entrySet()) {
            writer.addFloats(e.getKey(), DType.F32, new long[] {e.getValue().length}, e.getValue());
        }
        writer.write(out);
    }

    /**
     * Memory-maps a quantized checkpoint: matrices are read in place from the mapping. Integer
     * matrices take f32 or int8 activations as {@code -Dqlab.quant.activations} says (default f32).
     */
    public static Model load(Path file) {
        return load(file, QuantizedMatrix.defaultInt8Activations());
    }

    /**
     * {@link #load(Path)} with the activation path chosen here: with {@code int8Activations}
     * every integer matrix quantizes its activations to int8 per block and runs the int8 kernels
     * (their repacked copy is built here, so loading takes longer).
     */
    public static Model load(Path file, boolean int8Activations) {
        return load(file, int8Activations, HugePages.enabled());
    }

    /**
     * {@link #load(Path, boolean)}, choosing where the matrices live: with {@code ownMemory} each is
     * read into memory of its own on 2 MiB pages ({@link HugePages}; what decode wants, the file's
     * 4 KiB-page mapping slows the kernels' streaming), without it they stay slices of the mapping
     * (what a look at the file wants: nothing is read until it is used).
     */
    public static Model load(Path file, boolean int8Activations, boolean ownMemory) {
        SafetensorsFile f = SafetensorsFile.open(file);
        Map<String, String> meta = f.metadata();
        if (!FORMAT.equals(meta.get("format"))) {
            // Quoted and escaped: the value is the file's and must not break the one-line message.
            String format = meta.get("format");
            throw new QlabException(file + ": field \"__metadata__.format\" is "
                    + (format == null ? "missing" : new com.fasterxml.jackson.databind.node.TextNode(format).toString()) + ", expected \""
                    + FORMAT + "\" (not a qlab quantized checkpoint)");
        }
        String configJson = meta.get("qlab.config");
        if (configJson == null) {
            throw new QlabException(file + ": field \"__metadata__.qlab.config\" is missing");
        }
        ModelConfig c;
        try {
            c = ModelConfig.parse(configJson);
        } catch (QlabException e) {
            throw new QlabException(file + ": field \"__metadata__.qlab.config\": " + e.getMessage());
        }
        List<String> problems = new ArrayList<>();
        Map<String, long[]> expected = ModelManifest.of(c).expected();
        for (String name : expected.keySet()) {
            if (!f.tensors().containsKey(name)) {
                problems.add("missing tensor " + name);
            }
        }
        for (String name : f.tensors().keySet()) {
            if (!expected.containsKey(name)) {
                problems.add("unexpected tensor " + name);
            }
        }
        if (!problems.isEmpty()) {
            throw new QlabException(file + ": " + problems.size() + " tensor problem(s): " + String.join("; ",
                    problems.subList(0, Math.min(3, problems.size()))));
        }
        return new Model(c, Weights.load(c, new FileSource(f, int8Activations, ownMemory)), file.toString());
    }

    /** Provenance and config recorded in a quantized file's metadata. */
    public static Map<String, String> provenance(Path file) {
        Map<String, String> out = new LinkedHashMap<>();
        SafetensorsFile.open(file).metadata().forEach((k, v) -> {
            if (k.startsWith("qlab.") && !k.startsWith(TENSOR_KEY) && !k.equals("qlab.config")) {
                out.put(k.substring(5), v);
            }
        });
        return out;
    }

    // ----------------------------------------------------------------------------------------

    /** Matrices from a map, vectors from existing weights: the in-memory quantized model. */
    private record Source(Map<String, Matrix> matrices, Weights original) implements WeightSource {
        @Override
        public Matrix matrix(String name, int rows, int cols) {
            return matrices.get(name);
        }

        @Override
        public float[] vector(String name, int length) {
            return original.vectors().get(name);
        }

        @Override
        public String describe() {
            return "in-memory quantization";
        }
    }

    /** Matrices and vectors read from a mapped file, each checked against its recorded layout. */
    private record FileSource(SafetensorsFile file, boolean int8Activations, boolean ownMemory) implements WeightSource {
        @Override
        public Matrix matrix(String name, int rows, int cols) {
            String raw = file.metadata().get(TENSOR_KEY + name);
            String where = file.path() + ": tensor \"" + name + "\": ";
            if (raw == null) {
                throw new QlabException(where + "field \"__metadata__." + TENSOR_KEY + name + "\" is missing");
            }
            JsonNode m;
            try {
                m = JSON.readTree(raw);
            } catch (IOException e) {
                throw new QlabException(where + "its metadata is not valid JSON");
            }
            QuantFormat format;
            try {
                String fmt = m.path("format").asText();
                int group = m.path("group").asInt(-1);
                format = group == Formats.byName(fmt).groupSize() ? Formats.byName(fmt) : Formats.byName(fmt, group);
            } catch (QlabException e) {
                throw new QlabException(where + e.getMessage());
            }
            if (m.path("rows").asInt() != rows || m.path("cols").asInt() != cols) {
                throw new QlabException(where + "field \"shape\" is [" + m.path("rows").asInt() + ", " + m.path("cols").asInt()
                        + "], the config needs [" + rows + ", " + cols + "]");
            }
            long bytes = format.bytesPerRow(cols) * rows;
            TensorInfo t = file.info(name);
            if (t.dtype() != DType.U8 || t.byteLength() < bytes || m.path("bytes").asLong() != bytes) {
                throw new QlabException(where + "field \"data_offsets\" holds " + t.byteLength() + " bytes of " + t.dtype()
                        + ", format " + format.label() + " needs " + bytes + " bytes of U8 (truncated or corrupt?)");
            }
            // A repacked copy (on 2 MiB pages already) is what the kernels stream then: the codes stay in the mapping.
            boolean copy = ownMemory && !QuantizedMatrix.readsRepackedCopy(format, rows, int8Activations);
            MemorySegment data = copy ? file.copy(name) : file.bytes(name);
            return new QuantizedMatrix(format, data.asSlice(0, bytes), rows, cols, int8Activations);
        }

        @Override
        public float[] vector(String name, int length) {
            TensorInfo t = file.info(name);
            if (t.dtype() != DType.F32 || !Arrays.equals(t.shape(), new long[] {length})) {
                throw new QlabException(file.path() + ": tensor \"" + name + "\": field \"shape\" is " + Arrays.toString(t.shape())
                        + " " + t.dtype() + ", expected [" + length + "] F32");
            }
            return file.floats(name);
        }

        @Override
        public String describe() {
            return file.path().toString();
        }
    }

    /** Total stored bytes of a model's matrices. */
    public static long matrixBytes(List<TensorEntry> entries) {
        long b = 0;
        for (TensorEntry e : entries) {
            b += e.bytes();
        }
        return b;
    }

    /** Bits per weight over all matrices (the embedding once, even when tied). */
    public static double bitsPerWeight(List<TensorEntry> entries) {
        long params = 0;
        for (TensorEntry e : entries) {
            params += (long) e.rows() * e.cols();
        }
        return matrixBytes(entries) * 8.0 / params;
    }

}
