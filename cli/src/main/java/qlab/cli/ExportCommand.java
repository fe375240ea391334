package qlab.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import qlab.engine.QlabException;
import qlab.engine.gguf.GgufFile;
import qlab.engine.gguf.GgufSampling;
import qlab.engine.gguf.GgufTensor;
import qlab.engine.gguf.GgufTokenizer;
import qlab.engine.gguf.GgufValue;
import qlab.engine.model.Model;
import qlab.engine.util.WorkerPool;
import qlab.quant.checkpoint.GgufCheckpoint;
import qlab.quant.checkpoint.GgufExport;
import qlab.quant.checkpoint.QuantPlan;
import qlab.quant.checkpoint.QuantizedCheckpoint;
import qlab.quant.imatrix.ImportanceMatrix;
import qlab.quant.imatrix.LlamaImatrix;

@Command(name = "export", mixinStandardHelpOptions = true,
        description = "Quantize a model into a GGUF file that llama.cpp runs (tokenizer and chat template included;"
            + " formats with a ggml type, per-tensor mixes as quantize writes them).",
        footer = {"", "Example:", "  ./qlab export --model models/q05b --format q4_0 --out models/q05b/q4_0.gguf"})
final class ExportCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--model", required = true,
            description = "The original (f32/f16/bf16) model directory, or a GGUF file (dequantized to f32).")
    Path model;

    @Option(names = "--format", required = true, paramLabel = "SPEC",
            description = "Format, or a mix as for quantize: q8_0, q4_0+mlp-down=q8_0+emb=q8_0.")
    String format;

    @Option(names = "--imatrix", description = "Importance matrix (qlab calibrate, or llama-imatrix's .gguf or .dat).")
    Path imatrix;

    @Option(names = "--out", required = true, description = "Output file (.gguf).")
    Path out;

    @Mixin
    EngineOptions threads;

    @Override
    public Integer call() {
        QuantPlan plan = QuantPlan.parse(format);
        Model source;
        Map<String, GgufValue> tokenizer;
        String name;
        if (GgufCheckpoint.isGguf(model)) {
            GgufFile f = GgufCheckpoint.open(model);
            source = GgufCheckpoint.load(model, false, true);
            tokenizer = GgufTokenizer.metadataOf(f);
            tokenizer.putAll(GgufSampling.metadataOf(f));
            name = f.has("general.name") ? f.string("general.name") : model.getFileName().toString();
        } else {
            if (Files.isRegularFile(model) && QuantizedCheckpoint.isQuantized(model)) {
                throw new QlabException(model + " is already quantized; export from the original model directory or a GGUF");
            }
            source = Model.load(model);
            if (!Files.isRegularFile(model.resolve("tokenizer.json"))) {
                throw new QlabException(model + ": no tokenizer.json in the model directory (a GGUF carries its tokenizer)");
            }
            tokenizer = GgufTokenizer.metadataOf(model);
            tokenizer.putAll(GgufSampling.metadataOf(model));
            name = model.toAbsolutePath().normalize().getFileName().toString();
        }
        ImportanceMatrix im = null;
        if (imatrix != null) {
            im = LlamaImatrix.load(imatrix);
            im.checkAgainst(source.config(), imatrix);
        }
        long t0 = System.nanoTime();
        try (WorkerPool pool = threads.pool()) {
            GgufExport.write(source, name, plan, im, tokenizer, pool, out);
        }
        Map<String, Integer> types = new TreeMap<>();
        long bytes = 0;
        for (GgufTensor t : GgufCheckpoint.open(out).tensors().values()) {
            types.merge(t.type().name(), 1, Integer::sum);
            bytes += t.bytes();
        }
        spec.commandLine().getErr().printf("wrote %s: %s, tensors %s, %.1f MiB of tensor data, in %.1f s%n", out, plan, types,
                bytes / 1048576.0, (System.nanoTime() - t0) / 1e9);
        return 0;
    }
}
