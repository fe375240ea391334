package qlab.quant.checkpoint;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import qlab.engine.QlabException;
import qlab.engine.gguf.GgufArchitecture;
import qlab.engine.gguf.GgufModelConfig;
import qlab.engine.gguf.GgufTensorType;
import qlab.engine.gguf.GgufTokenizer;
import qlab.engine.gguf.GgufValue;
import qlab.engine.gguf.GgufWriter;
import qlab.engine.model.Model;
import qlab.engine.model.ModelConfig;
import qlab.engine.model.ModelFamily;
import qlab.engine.model.RopeScaling;
import qlab.engine.tensor.F32Matrix;
import qlab.engine.tensor.Matrix;
import qlab.engine.util.WorkerPool;
import qlab.quant.Formats;
import qlab.quant.QuantFormat;
import qlab.quant.QuantizedMatrix;
import qlab.quant.ggml.GgmlCodec;
import qlab.quant.ggml.GgmlType;
import qlab.quant.imatrix.ImportanceMatrix;

/**
 * Writes a qlab configuration as a GGUF file llama.cpp runs: each weight matrix quantized by the
 * plan with its format's quantizer and converted to ggml's blocks by the format's codec, norms and
 * biases F32, under llama.cpp's tensor names with {@code ne = [cols, rows]}; the architecture's
 * hyperparameters, the tokenizer and chat template as metadata; alignment 32.
 */
public final class GgufExport {

    public static final int ALIGNMENT = 32;

    private GgufExport() {}

    /** Registry formats that have a ggml type, by name (at their default group). */
    public static List<String> exportableFormats() {
        List<String> out = new ArrayList<>();
        for (QuantFormat f : Formats.all()) {
            if (f.ggml().isPresent()) {
                out.add(f.name());
            }
        }
        return out;
    }

    /** The tensor's format and codec, or a one-line refusal naming the tensor. */
    private static GgmlCodec codecFor(String qlabName, String ggufName, QuantFormat format, int cols) {
        Optional<GgmlCodec> codec = format.ggml();
        if (codec.isEmpty()) {
            throw new QlabException("format " + format.label() + " (for " + ggufName + ") has no ggml type; formats that export: "
                    + String.join(", ", exportableFormats()));
        }
        GgmlType t = codec.get().type();
        if (cols % t.blockSize != 0) {
            throw new QlabException("tensor " + ggufName + " has rows of " + cols + " values, not a multiple of " + t
                    + "'s block of " + t.blockSize + " (a GGUF cannot pad rows); give it another format in the spec, e.g. +"
                    + QuantPlan.Role.of(qlabName).id() + "=f16");
        }
        return codec.get();
    }

    /** llama.cpp's {@code general.file_type} (enum llama_ftype) for a file mostly in {@code t}, if it has one. */
    static Optional<Integer> fileType(GgmlType t) {
        return Optional.ofNullable(switch (t) {
            case F32 -> 0;
            case F16 -> 1;
            case Q4_0 -> 2;
            case Q4_1 -> 3;
            case Q8_0 -> 7;
            case Q5_0 -> 8;
            case Q5_1 -> 9;
            case Q2_K -> 10;
            case Q3_K -> 12;
            case Q4_K -> 15;
            case Q5_K -> 17;
            case Q6_K -> 18;
            case IQ4_NL -> 25;
            case IQ4_XS -> 30;
            case BF16 -> 32;
            default -> null;
        });
    }

    /**
     * Exports an f32 model. Every tensor's format is checked before anything is quantized, so a
     * refusal costs nothing.
     *
     * @param tokenizer the {@code tokenizer.*} (and {@code general.sampling.*}) metadata to carry (see
     *     qlab.engine.gguf.GgufTokenizer); its token list is padded to the embedding's rows
     */
    public static void write(Model source, String name, QuantPlan plan, ImportanceMatrix importance,
            Map<String, GgufValue> tokenizer, WorkerPool pool, Path out) {
        ModelConfig c = source.config();
        GgufArchitecture arch = GgufArchitecture.of(c.family());
        if (c.family() == ModelFamily.QWEN3 && c.oBias()) {
            throw new QlabException(source.source() + ": field \"attention_bias\" is true; llama.cpp's qwen3 architecture has no projection biases");
        }
        if (c.ropeScaling().type() == RopeScaling.Type.LLAMA3 && c.family() != ModelFamily.LLAMA) {
            throw new QlabException(source.source() + ": field \"rope_scaling\" is llama3 scaling, which llama.cpp reads for the llama architecture only");
        }
        Map<String, Matrix> matrices = source.weights().matrices();
        Map<String, QuantFormat> formats = new LinkedHashMap<>();
        for (var e : matrices.entrySet()) {
            String ggufName = arch.ggufName(e.getKey()).orElseThrow();
            if (!(e.getValue() instanceof F32Matrix)) {
                throw new QlabException(source.source() + ": tensor " + ggufName + " is already " + e.getValue().format()
                        + "; export from the original (f32/f16/bf16) model or a GGUF");
            }
            QuantFormat f = plan.choiceFor(e.getKey(), c, e.getValue().cols(), importance != null).resolve();
            codecFor(e.getKey(), ggufName, f, e.getValue().cols());
            formats.put(e.getKey(), f);
        }
        GgufWriter w = new GgufWriter(ALIGNMENT);
        w.put("general.architecture", GgufValue.string(arch.name()));
        w.put("general.type", GgufValue.string("model"));
        w.put("general.name", GgufValue.string(name));
        // A llama.cpp named type writes its own file type (Q4_K_M: 15); a plain format, its type's.
        Optional<Integer> fileType = plan.recipe().isPresent() ? Optional.of(plan.recipe().get().fileType)
                : fileType(formats.get(qlab.engine.model.ModelManifest.layer(0, "mlp.up_proj.weight")).ggml().orElseThrow().type());
        fileType.ifPresent(t -> w.put("general.file_type", GgufValue.u32(t)));
        w.put("general.quantization_version", GgufValue.u32(2));
        w.put("general.size_label", GgufValue.string(sizeLabel(parameterCount(source))));
        GgufModelConfig.metadata(arch, c).forEach(w::put);
        // llama.cpp takes the vocabulary's size from the token list and checks token_embd against it
        GgufTokenizer.padTo(tokenizer, c.vocabSize(), source.source()).forEach(w::put);

        if (c.ropeScaling().type() == RopeScaling.Type.LLAMA3) {
            float[] divisors = GgufModelConfig.ropeDivisors(c.ropeScaling(), c.ropeTheta(), c.headDim());
            w.tensor(GgufArchitecture.ROPE_FREQS, new long[] {divisors.length}, GgufTensorType.F32, 4L * divisors.length,
                    () -> GgufWriter.f32(divisors));
        }
        for (var e : matrices.entrySet()) {
            F32Matrix m = (F32Matrix) e.getValue();
            float[] rows = ggufRows(arch, c, e.getKey(), m.data(), m.cols());
            QuantFormat f = formats.get(e.getKey());
            GgmlCodec codec = f.ggml().orElseThrow();
            GgmlType t = codec.type();
            long rowBytes = t.rowBytes(m.cols());
            float[] imp = importance == null ? null : importance.forMatrix(e.getKey());
            w.tensor(arch.ggufName(e.getKey()).orElseThrow(), new long[] {m.cols(), m.rows()},
                    GgufCheckpoint.TYPES.apply(t.id), rowBytes * m.rows(), () -> {
                        QuantizedMatrix q = QuantizedMatrix.quantize(f, rows, m.rows(), m.cols(), imp, pool);
                        MemorySegment dst = java.lang.foreign.Arena.ofAuto().allocate(rowBytes * m.rows());
                        long qlabRow = f.bytesPerRow(m.cols());
                        for (int r = 0; r < m.rows(); r++) {
                            codec.toGgml(q.data(), r * qlabRow, m.cols(), dst, r * rowBytes);
                        }
                        return dst;
                    });
        }
        for (var e : source.weights().vectors().entrySet()) {
            float[] v = ggufRows(arch, c, e.getKey(), e.getValue(), 1);
            w.tensor(arch.ggufName(e.getKey()).orElseThrow(), new long[] {v.length}, GgufTensorType.F32, 4L * v.length,
                    () -> GgufWriter.f32(v));
        }
        w.write(out);
    }

    /** Every value the file holds (weights, norms, biases; llama3's RoPE divisors), as the converter counts parameters. */
    private static long parameterCount(Model m) {
        long n = 0;
        for (Matrix x : m.weights().matrices().values()) {
            n += (long) x.rows() * x.cols();
        }
        for (float[] v : m.weights().vectors().values()) {
            n += v.length;
        }
        if (m.config().ropeScaling().type() == RopeScaling.Type.LLAMA3) {
            n += m.config().headDim() / 2;
        }
        return n;
    }

    /**
     * {@code general.size_label} as the converter derives it from the parameter count when the
     * model's name gives none (gguf-py's {@code model_weight_count_rounded_notation}, two digits):
     * 494032768 is "494M", 1235814400 "1.2B".
     */
    static String sizeLabel(long params) {
        double scaled;
        String suffix;
        if (params > 1e12) {
            scaled = params * 1e-12;
            suffix = "T";
        } else if (params > 1e9) {
            scaled = params * 1e-9;
            suffix = "B";
        } else if (params > 1e6) {
            scaled = params * 1e-6;
            suffix = "M";
        } else {
            scaled = params * 1e-3;
            suffix = "K";
        }
        String whole = Long.toString((long) Math.rint(scaled)).replaceFirst("^0+", "");
        int decimals = Math.max(2 - whole.length(), 0);
        return String.format(java.util.Locale.ROOT, "%." + decimals + "f", scaled) + suffix;
    }

    /**
     * A tensor's values in the row order llama.cpp's converter writes (llama's q and k rows
     * interleaved per head; see GgufArchitecture#ggufRowOrder). Quantization is row by row and the
     * importance weights are per column, so reordering before quantizing gives the reordered blocks.
     */
    private static float[] ggufRows(GgufArchitecture arch, ModelConfig c, String qlabName, float[] values, int cols) {
        Optional<int[]> order = arch.ggufRowOrder(qlabName, c);
        return order.isPresent() ? GgufArchitecture.reorderRows(values, cols, order.get(), true) : values;
    }
}
