package qlab.quant.checkpoint;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.IntFunction;
import qlab.engine.QlabException;
import qlab.engine.gguf.GgufFile;
import qlab.engine.gguf.GgufModel;
import qlab.engine.gguf.GgufTensor;
import qlab.engine.gguf.GgufTensorType;
import qlab.engine.model.Model;
import qlab.engine.model.WeightSource;
import qlab.engine.model.Weights;
import qlab.engine.tensor.F32Matrix;
import qlab.engine.tensor.Matrix;
import qlab.engine.util.HugePages;
import qlab.quant.Formats;
import qlab.quant.QuantFormat;
import qlab.quant.QuantizedMatrix;
import qlab.quant.ggml.GgmlCodec;
import qlab.quant.ggml.GgmlType;

/**
 * llama.cpp's GGUF files as qlab models. F32, F16 and BF16 tensors are widened to f32 exactly (as
 * a safetensors checkpoint loads); a tensor of a quantized ggml type is converted, block for
 * block, into the qlab format whose {@link QuantFormat#ggml() codec} reads that type, and runs on
 * that format's kernels. A type no format reads is refused at load, naming the tensor and its type.
 */
public final class GgufCheckpoint {

    /** Every type ggml defines, by GGUF id, as the container needs it. */
    public static final IntFunction<GgufTensorType> TYPES = id -> GgmlType.ofId(id)
            .map(t -> new GgufTensorType(t.id, t.name(), t.blockSize, t.typeSize)).orElse(null);

    private GgufCheckpoint() {}

    /** Whether {@code path} is a GGUF file (by its magic). */
    public static boolean isGguf(Path path) {
        if (!Files.isRegularFile(path)) {
            return false;
        }
        try (var in = Files.newInputStream(path)) {
            byte[] magic = in.readNBytes(4);
            return magic.length == 4 && magic[0] == 'G' && magic[1] == 'G' && magic[2] == 'U' && magic[3] == 'F';
        } catch (java.io.IOException e) {
            return false;
        }
    }

    public static GgufFile open(Path path) {
        return GgufFile.open(path, TYPES);
    }

    /** The ggml type of a tensor type id (every id the container accepted has one). */
    public static GgmlType ggmlType(GgufTensorType t) {
        return GgmlType.ofId(t.id()).orElseThrow();
    }

    /** The qlab format whose codec reads blocks of {@code type}, if any. */
    public static Optional<QuantFormat> formatFor(GgmlType type) {
        for (QuantFormat f : Formats.allVariants()) {
            Optional<GgmlCodec> c = f.ggml();
            if (c.isPresent() && c.get().type() == type) {
                return Optional.of(f);
            }
        }
        return Optional.empty();
    }

    /** The ggml types qlab reads and writes, in id order. */
    public static List<GgmlType> readableTypes() {
        List<GgmlType> out = new ArrayList<>();
        for (GgmlType t : GgmlType.values()) {
            if (formatFor(t).isPresent()) {
                out.add(t);
            }
        }
        return out;
    }

    /**
     * Loads a GGUF model: float tensors widened to f32, quantized tensors in their qlab format
     * (integer matrices on f32 or int8 activations as {@code -Dqlab.quant.activations} says).
     */
    public static Model load(Path path) {
        return load(path, QuantizedMatrix.defaultInt8Activations(), false);
    }

    /**
     * {@link #load(Path)}; with {@code dequantize} every matrix is widened to f32 instead (the f32
     * reference a sweep or {@code quantize} starts from).
     */
    public static Model load(Path path, boolean int8Activations, boolean dequantize) {
        GgufModel g = GgufModel.of(open(path));
        for (GgufTensor t : g.file().tensors().values()) {
            GgmlType type = ggmlType(t.type());
            if (!t.type().isFloat() && formatFor(type).isEmpty()) {
                throw new QlabException(path + ": tensor \"" + t.name() + "\": field \"type\" is " + type
                        + ", which qlab does not read (readable: " + readableTypes() + ")");
            }
        }
        WeightSource floats = g.floatSource();
        WeightSource source = new WeightSource() {
            @Override
            public Matrix matrix(String name, int rows, int cols) {
                GgufTensor t = g.checked(name, rows, cols);
                if (t.type().isFloat()) {
                    return floats.matrix(name, rows, cols);
                }
                QuantizedMatrix q = read(g.file(), t, g.ggufRowOrder(name).orElse(null), int8Activations);
                return dequantize ? new F32Matrix(dequantized(q), rows, cols) : q;
            }

            @Override
            public float[] vector(String name, int length) {
                return floats.vector(name, length);
            }

            @Override
            public String describe() {
                return path.toString();
            }
        };
        return new Model(g.config(), Weights.load(g.config(), source), path.toString());
    }

    /**
     * A quantized tensor's ggml blocks converted row by row into its qlab format; with
     * {@code rowOrder}, file row {@code r} becomes row {@code rowOrder[r]} (whole rows move, so the
     * blocks are untouched).
     */
    static QuantizedMatrix read(GgufFile file, GgufTensor t, int[] rowOrder, boolean int8Activations) {
        GgmlType type = ggmlType(t.type());
        QuantFormat format = formatFor(type).orElseThrow();
        GgmlCodec codec = format.ggml().orElseThrow();
        int cols = (int) t.ne()[0];
        int rows = (int) (t.elementCount() / cols);
        long ggmlRow = type.rowBytes(cols);
        long qlabRow = format.bytesPerRow(cols);
        MemorySegment src = file.bytes(t.name());
        MemorySegment dst = HugePages.allocate(qlabRow * rows);
        for (int r = 0; r < rows; r++) {
            codec.fromGgml(src, r * ggmlRow, cols, dst, (rowOrder == null ? r : rowOrder[r]) * qlabRow);
        }
        return new QuantizedMatrix(format, dst, rows, cols, int8Activations);
    }

    /** Every value of a quantized matrix, row-major, as its format dequantizes them. */
    static float[] dequantized(QuantizedMatrix q) {
        int rows = q.rows();
        int cols = q.cols();
        float[] out = new float[Math.multiplyExact(rows, cols)];
        long rowBytes = q.quantFormat().bytesPerRow(cols);
        for (int r = 0; r < rows; r++) {
            q.quantFormat().dequantizeRow(q.data(), r * rowBytes, cols, out, r * cols);
        }
        return out;
    }

    /** The values of a GGUF tensor in the file's row order, dequantized as its type's qlab format does (float types widened). */
    public static float[] values(GgufFile file, String ggufName) {
        GgufTensor t = file.tensor(ggufName);
        if (t.type().isFloat()) {
            return file.floats(ggufName);
        }
        GgmlType type = ggmlType(t.type());
        if (formatFor(type).isEmpty()) {
            throw new QlabException(file.source() + ": tensor \"" + ggufName + "\": field \"type\" is " + type
                    + ", which qlab does not read (readable: " + readableTypes() + ")");
        }
        return dequantized(read(file, t, null, false));
    }

    static byte[] bytes(MemorySegment s) {
        return s.toArray(ValueLayout.JAVA_BYTE);
    }
}
