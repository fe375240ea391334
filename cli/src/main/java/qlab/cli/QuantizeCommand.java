package qlab.cli;

import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import qlab.engine.QlabException;
import qlab.engine.model.Model;
import qlab.engine.model.ModelHash;
import qlab.engine.util.OutputPaths;
import qlab.engine.util.WorkerPool;
import qlab.quant.checkpoint.GgufCheckpoint;
import qlab.quant.checkpoint.QuantPlan;
import qlab.quant.checkpoint.QuantizedCheckpoint;
import qlab.quant.imatrix.ImportanceMatrix;
import qlab.quant.imatrix.LlamaImatrix;
import qlab.engine.util.ProgressLine;

@Command(name = "quantize", mixinStandardHelpOptions = true,
        description = "Quantize a model's weight matrices, one format or a per-tensor mix, into one checkpoint file.",
        footer = {"", "Example:",
                "  ./qlab quantize --model models/q05b --format q4_0 \\",
                "      --out models/q05b/q4_0.safetensors"})
final class QuantizeCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--model", required = true, description = "The original (f32/f16/bf16) model directory, or a GGUF file (dequantized to f32).")
    Path model;

    @Option(names = "--format", required = true,
            description = {"Format, or a mix: q4_8, q4_0/g64, q4_8+attn=q8_0+emb=q8_0, or a llama.cpp named type: "
                + "Q4_K_M, Q5_K_S, IQ4_XS, ... in any case (q4_k_m). Where a name is both, upper case is llama.cpp's recipe "
                + "and lower case the format on every matrix: Q4_0 is not q4_0 (--explain shows both). "
                + "Formats: ${COMPLETION-CANDIDATES}"},
            completionCandidates = FormatNames.class)
    String format;

    @Option(names = "--group", description = "Group size of the default format (32, 64, 128 where the format supports it).")
    Integer group;

    @Option(names = "--attn", description = "Format of q/k/v/o projections.")
    String attn;

    @Option(names = "--attn-qkv", description = "Format of q/k/v projections.")
    String attnQkv;

    @Option(names = "--attn-o", description = "Format of the attention output projection.")
    String attnO;

    @Option(names = "--mlp", description = "Format of gate/up/down projections.")
    String mlp;

    @Option(names = "--mlp-gate-up", description = "Format of gate and up projections.")
    String mlpGateUp;

    @Option(names = "--mlp-down", description = "Format of the down projection.")
    String mlpDown;

    @Option(names = "--emb", description = "Format of the token embedding (also the LM head when tied).")
    String emb;

    @Option(names = "--head", description = "Format of a separate (untied) LM head.")
    String head;

    @Option(names = "--imatrix", description = "Importance matrix (qlab calibrate, or llama-imatrix's .gguf or .dat): weighted scale search.")
    Path imatrix;

    @Option(names = "--out", description = "Output file (.safetensors); required unless --explain.")
    Path out;

    @Option(names = "--explain", description = "Print each matrix's format (and the llama.cpp type behind it) and the bits per weight; write nothing.")
    boolean explain;

    @Mixin
    EngineOptions threads;

    @Mixin
    ProgressOption progress;

    static final class FormatNames implements Iterable<String> {
        @Override
        public java.util.Iterator<String> iterator() {
            return qlab.quant.Formats.names().iterator();
        }
    }

    @Override
    public Integer call() {
        QuantPlan plan = QuantPlan.parse(group == null ? format : format + "/g" + group);
        String[][] roles = {{"attn", attn}, {"mlp", mlp}, {"attn-qkv", attnQkv}, {"attn-o", attnO},
            {"mlp-gate-up", mlpGateUp}, {"mlp-down", mlpDown}, {"emb", emb}, {"head", head}};
        for (String[] r : roles) {
            if (r[1] != null) {
                plan = plan.with(r[0], r[1]);
            }
        }
        if (Files.isRegularFile(model) && !GgufCheckpoint.isGguf(model) && QuantizedCheckpoint.isQuantized(model)) {
            throw new QlabException(model + " is already quantized; quantize from the original model directory");
        }
        if (explain) {
            explain(plan);
            return 0;
        }
        if (out == null) {
            throw new QlabException("quantize: --out is required (or --explain to only show the assignment)");
        }
        OutputPaths.checkFile(out);
        // A GGUF is dequantized to the f32 reference (exact for its F32/F16/BF16 tensors).
        Model source = GgufCheckpoint.isGguf(model) ? GgufCheckpoint.load(model, false, true) : Model.load(model);
        ImportanceMatrix im = null;
        if (imatrix != null) {
            im = LlamaImatrix.load(imatrix);
            im.checkAgainst(source.config(), imatrix);
        }
        long t0 = System.nanoTime();
        Model q;
        try (WorkerPool pool = threads.pool();
             ProgressLine line = progress.open(spec, "quantize", Models.matrixWeights(source), "weights", false)) {
            q = QuantizedCheckpoint.quantize(source, plan, im, pool, line);
        }
        Map<String, String> provenance = new LinkedHashMap<>();
        provenance.put("source", model.toAbsolutePath().normalize().toString());
        provenance.put("source_hash", ModelHash.of(model));
        provenance.put("plan", plan.toString());
        provenance.put("imatrix", imatrix == null ? "none" : ModelHash.of(imatrix));
        QuantizedCheckpoint.write(q, provenance, out);
        copyTokenizerFiles();
        List<QuantizedCheckpoint.TensorEntry> entries = QuantizedCheckpoint.entries(q);
        PrintWriter err = spec.commandLine().getErr();
        Map<String, Integer> byFormat = new TreeMap<>();
        for (var e : entries) {
            byFormat.merge(e.group() > 1 ? e.format() + "/g" + e.group() : e.format(), 1, Integer::sum);
            if (e.padded()) {
                err.printf("note: %s has rows of %d values, not a multiple of %s's block of %d: the last block is zero-padded%n",
                        e.name(), e.cols(), e.format(), e.group());
            }
        }
        err.printf("wrote %s: %s, %d matrices %s, %.3f bits per weight, %.1f MiB of matrices, in %.1f s%n", out, plan,
                entries.size(), byFormat, QuantizedCheckpoint.bitsPerWeight(entries),
                QuantizedCheckpoint.matrixBytes(entries) / 1048576.0, (System.nanoTime() - t0) / 1e9);
        return 0;
    }

    /** Prints the plan's per-matrix assignment for the model's config, and the resulting bits per weight. */
    private void explain(QuantPlan plan) {
        qlab.engine.model.ModelConfig config = GgufCheckpoint.isGguf(model) ? GgufCheckpoint.load(model, false, true).config()
                : qlab.engine.model.ModelConfig.read(model);
        PrintWriter o = spec.commandLine().getOut();
        long bytes = 0;
        long weights = 0;
        o.printf("%-45s %14s  %-10s %s%n", "matrix", "rows x cols", "format", plan.recipe().isPresent() ? "llama.cpp type" : "");
        for (QuantPlan.Assignment a : plan.explain(config, imatrix != null)) {
            String llama = a.llama().map(c -> c.fellBack() ? c.chosen() + " -> " + c.type() + " (rows of " + a.cols()
                    + " do not hold whole " + c.chosen() + " blocks)" : c.type().toString()).orElse("");
            o.printf("%-45s %14s  %-10s %s%n", a.tensor(), a.rows() + " x " + a.cols(), a.format(), llama);
            bytes += a.bytes();
            weights += a.rows() * a.cols();
        }
        o.printf("%s: %.4f bits per weight over the weight matrices (%.2f MiB)%n", plan, bytes * 8.0 / weights,
                bytes / 1048576.0);
        plan.otherReading().ifPresent(other -> {
            String bpw;
            try {
                bpw = String.format("%.4f bits per weight", bitsPerWeight(other, config));
            } catch (QlabException e) {
                bpw = "not for this model (" + e.getMessage() + ")";
            }
            if (plan.recipe().isPresent()) {
                o.printf("note: %s is %s; --format %s puts %s on every matrix: %s%n", plan.format(),
                        QuantPlan.recipeMeaning(), other.format(), other.format(), bpw);
            } else {
                o.printf("note: %s is qlab's format on every matrix; %s (what llama-quantize means by %s in any case) is %s:"
                        + " --format %s, %s%n", plan.format(), other.format(), plan.format(), QuantPlan.recipeMeaning(),
                        other, bpw);
            }
        });
        o.flush();
    }

    private double bitsPerWeight(QuantPlan plan, qlab.engine.model.ModelConfig config) {
        long bytes = 0;
        long weights = 0;
        for (QuantPlan.Assignment a : plan.explain(config, imatrix != null)) {
            bytes += a.bytes();
            weights += a.rows() * a.cols();
        }
        return bytes * 8.0 / weights;
    }

    /** Text commands on the quantized file read the tokenizer and chat template beside it. */
    private void copyTokenizerFiles() {
        TokenizerFiles.copy(TextTokens.directory(model), out.toAbsolutePath().getParent());
    }
}
