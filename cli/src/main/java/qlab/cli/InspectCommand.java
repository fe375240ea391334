package qlab.cli;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import qlab.engine.model.Model;
import qlab.engine.gguf.GgufFile;
import qlab.engine.gguf.GgufModel;
import qlab.engine.gguf.GgufTensor;
import qlab.engine.model.KvType;
import qlab.engine.model.KvTypes;
import qlab.engine.model.ModelConfig;
import qlab.engine.model.ModelManifest;
import qlab.engine.safetensors.Checkpoint;
import qlab.engine.safetensors.TensorInfo;
import qlab.quant.KvFormats;
import qlab.quant.checkpoint.GgufCheckpoint;
import qlab.quant.checkpoint.QuantizedCheckpoint;

@Command(name = "inspect", mixinStandardHelpOptions = true,
        description = "Check a model against its config and print parameters, tensors, bytes and dtypes.",
        footer = {"", "Example:", "  ./qlab inspect --model models/q05b"})
final class InspectCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--model", required = true, description = "Model directory (or .safetensors or .gguf file).")
    Path model;

    @Option(names = "--json", description = "Print one JSON object on stdout and nothing else.")
    boolean json;

    @Override
    public Integer call() {
        if (GgufCheckpoint.isGguf(model)) {
            return inspectGguf();
        }
        if (java.nio.file.Files.isRegularFile(model) && QuantizedCheckpoint.isQuantized(model)) {
            return inspectQuantized();
        }
        ModelConfig config = ModelConfig.read(model);
        Checkpoint ckpt = Checkpoint.open(model);
        List<String> problems = ModelManifest.of(config).problems(Model.shapes(ckpt));
        long params = 0;
        Map<String, Integer> dtypes = new TreeMap<>();
        for (TensorInfo t : ckpt.tensors().values()) {
            params += t.elementCount();
            dtypes.merge(t.dtype().name(), 1, Integer::sum);
        }
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("model", model.toString());
            m.put("parameters", params);
            m.put("tensors", ckpt.tensors().size());
            m.put("bytes", ckpt.dataBytes());
            m.put("files", ckpt.files().size());
            m.put("dtypes", dtypes);
            m.put("config", config.describe());
            m.put("kv_bytes_per_token_per_layer", kvBytesPerToken(config));
            m.put("problems", problems);
            m.put("ok", problems.isEmpty());
            JsonOutput.print(out, m);
        } else {
            out.printf("model:      %s%n", model);
            out.printf("config:     %s, hidden %d, intermediate %d, layers %d, heads %d (kv %d, head dim %d), vocab %d, %s, rope theta %g%n",
                    config.family().modelType(), config.hiddenSize(), config.intermediateSize(), config.numLayers(), config.numHeads(),
                    config.numKvHeads(), config.headDim(), config.vocabSize(),
                    config.tieWordEmbeddings() ? "tied embeddings" : "separate lm_head", config.ropeTheta());
            out.printf("structure:  %s%n", structure(config));
            out.printf("files:      %d%n", ckpt.files().size());
            out.printf("tensors:    %d%n", ckpt.tensors().size());
            out.printf("parameters: %,d%n", params);
            out.printf("bytes:      %,d%n", ckpt.dataBytes());
            out.printf("dtypes:     %s%n", dtypes);
            out.println(kvLine(config));
            if (problems.isEmpty()) {
                out.println("status:     ok (every tensor the config needs, with its shape, and nothing else)");
            } else {
                out.printf("status:     %d problem(s)%n", problems.size());
                for (String p : problems) {
                    out.println("  " + p);
                }
            }
        }
        out.flush();
        if (!problems.isEmpty()) {
            spec.commandLine().getErr().println("qlab: " + model + ": " + problems.size()
                    + " tensor problem(s): " + String.join("; ", problems));
            return 1;
        }
        return 0;
    }

    /** A quantized checkpoint: bits per weight per tensor and in total, and where it came from. */
    /** What the family adds to the plain decoder: biases, q/k norms, RoPE scaling. */
    static String structure(ModelConfig c) {
        java.util.List<String> parts = new java.util.ArrayList<>();
        if (c.qkvBias()) {
            parts.add(c.oBias() ? "q/k/v/o biases" : "q/k/v biases");
        }
        if (c.mlpBias()) {
            parts.add("MLP biases");
        }
        if (c.qkNorm()) {
            parts.add("q/k norms");
        }
        parts.add("RoPE scaling " + c.ropeScaling());
        return String.join(", ", parts);
    }

    private int inspectQuantized() {
        Model m = QuantizedCheckpoint.load(model, false, false); // validated, not read: inspect runs no kernel
        var entries = QuantizedCheckpoint.entries(m);
        Map<String, String> provenance = QuantizedCheckpoint.provenance(model);
        long fileBytes;
        try {
            fileBytes = java.nio.file.Files.size(model);
        } catch (java.io.IOException e) {
            throw new qlab.engine.QlabException(model + ": cannot stat: " + e.getMessage());
        }
        long params = m.config().parameterCount();
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            Map<String, Object> j = new LinkedHashMap<>();
            j.put("model", model.toString());
            j.put("quantized", true);
            j.put("parameters", params);
            j.put("tensors", entries.size() + m.weights().vectors().size());
            j.put("bytes", fileBytes);
            j.put("matrix_bytes", QuantizedCheckpoint.matrixBytes(entries));
            j.put("bits_per_weight", QuantizedCheckpoint.bitsPerWeight(entries));
            j.put("bits_per_parameter", fileBytes * 8.0 / params);
            j.put("provenance", provenance);
            java.util.List<Map<String, Object>> rows = new java.util.ArrayList<>();
            for (var e : entries) {
                Map<String, Object> r = new LinkedHashMap<>();
                r.put("name", e.name());
                r.put("format", e.format());
                r.put("group", e.group());
                r.put("shape", new int[] {e.rows(), e.cols()});
                r.put("bytes", e.bytes());
                r.put("bits_per_weight", e.bitsPerWeight());
                r.put("padded", e.padded());
                rows.add(r);
            }
            j.put("matrices", rows);
            j.put("config", m.config().describe());
            j.put("kv_bytes_per_token_per_layer", kvBytesPerToken(m.config()));
            JsonOutput.print(out, j);
        } else {
            out.printf("model:      %s (qlab quantized checkpoint)%n", model);
            provenance.forEach((k, v) -> out.printf("  %-12s %s%n", k + ":", v));
            out.printf("%-48s %-10s %6s %16s %12s %8s%n", "matrix", "format", "group", "shape", "bytes", "bpw");
            for (var e : entries) {
                out.printf("%-48s %-10s %6d %16s %,12d %8.3f%s%n", e.name(), e.format(), e.group(),
                        "[" + e.rows() + ", " + e.cols() + "]", e.bytes(), e.bitsPerWeight(), e.padded() ? "  (last block padded)" : "");
            }
            out.printf("parameters: %,d%n", params);
            out.printf("matrices:   %,d bytes, %.3f bits per weight%n", QuantizedCheckpoint.matrixBytes(entries),
                    QuantizedCheckpoint.bitsPerWeight(entries));
            out.printf("file:       %,d bytes, %.3f bits per parameter (norms, biases and alignment included)%n", fileBytes,
                    fileBytes * 8.0 / params);
            out.println(kvLine(m.config()));
        }
        out.flush();
        return 0;
    }

    /** A GGUF: container facts, its metadata, tensor types, and the config qlab reads from it. */
    private int inspectGguf() {
        GgufFile f = GgufCheckpoint.open(model);
        ModelConfig config = GgufModel.of(f).config();
        Map<String, Integer> types = new TreeMap<>();
        long params = config.parameterCount(); // the model's weights: llama's rope_freqs tensor is a hyperparameter
        long bytes = 0;
        for (GgufTensor t : f.tensors().values()) {
            types.merge(t.type().name(), 1, Integer::sum);
            bytes += t.bytes();
        }
        Map<String, Object> metadata = new LinkedHashMap<>();
        f.metadata().forEach((k, v) -> metadata.put(k, v.describe()));
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("model", model.toString());
            m.put("gguf_version", f.version());
            m.put("alignment", f.alignment());
            m.put("parameters", params);
            m.put("tensors", f.tensors().size());
            m.put("bytes", bytes);
            m.put("types", types);
            m.put("metadata", metadata);
            m.put("config", config.describe());
            m.put("kv_bytes_per_token_per_layer", kvBytesPerToken(config));
            m.put("ok", true);
            JsonOutput.print(out, m);
        } else {
            out.printf("model:      %s (GGUF v%d, alignment %d)%n", model, f.version(), f.alignment());
            out.printf("config:     %s%n", config.describe());
            out.printf("tensors:    %d%n", f.tensors().size());
            out.printf("parameters: %,d%n", params);
            out.printf("bytes:      %,d%n", bytes);
            out.printf("types:      %s%n", types);
            out.println(kvLine(config));
            metadata.forEach((k, v) -> out.printf("  %s = %s%n", k, v));
        }
        return 0;
    }

    /** Bytes of K and V per token and layer for each KV cache type this model's head_dim allows. */
    private static Map<String, Long> kvBytesPerToken(ModelConfig config) {
        Map<String, Long> out = new LinkedHashMap<>();
        for (String name : KvFormats.NAMES) {
            KvType t = KvFormats.named(name);
            if (config.headDim() % t.blockSize() == 0) {
                out.put(name, new KvTypes(t, t).bytesPerTokenPerLayer(config));
            }
        }
        return out;
    }

    /** e.g. "kv cache:   bytes per token per layer: f32 1024, f16 512, ...; f32 at 32768 positions: 3072.0 MiB" */
    private static String kvLine(ModelConfig config) {
        StringBuilder sb = new StringBuilder("kv cache:   bytes per token per layer:");
        kvBytesPerToken(config).forEach((k, v) -> sb.append(' ').append(k).append(' ').append(v).append(','));
        sb.setLength(sb.length() - 1);
        long f32 = KvTypes.F32.bytesPerTokenPerLayer(config);
        sb.append(String.format("; f32 at %d positions (the config's maximum): %.1f MiB", config.maxPositionEmbeddings(),
                (double) f32 * config.numLayers() * config.maxPositionEmbeddings() / 1048576.0));
        return sb.toString();
    }
}
