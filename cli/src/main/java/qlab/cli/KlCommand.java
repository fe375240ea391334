package qlab.cli;

import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import qlab.engine.QlabException;
import qlab.engine.bench.MachineInfo;
import qlab.engine.eval.KlDivergence;
import qlab.engine.eval.LogProbBaseline;
import qlab.engine.eval.ScoringMode;
import qlab.engine.model.Model;
import qlab.engine.model.ModelHash;
import qlab.engine.model.Transformer;
import qlab.engine.util.WorkerPool;

@Command(name = "kl", mixinStandardHelpOptions = true,
        description = "KL divergence of a model against a reference model over a text, with the statistics llama-perplexity reports.",
        footer = {"", "Example:",
                "  ./qlab kl --base models/q05b --model models/q05b/q4_0.safetensors \\",
                "      --text datasets/eval/en-prose.txt --max-tokens 2048"})
final class KlCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--base", required = true, description = "Reference model (usually the fp32 model directory).")
    Path base;

    @Option(names = "--model", required = true, description = "Model to score (directory or quantized file).")
    Path model;

    @Mixin
    TokenInput input;

    @Option(names = "--ctx", defaultValue = "512", description = "Window length (default: ${DEFAULT-VALUE}).")
    int ctx;

    @Option(names = "--score", defaultValue = "second-half", description = "second-half or all (default: ${DEFAULT-VALUE}).")
    String score;

    @Option(names = "--baseline", defaultValue = "full",
            description = "full (every log-prob: exact) or compact (top-k log-probs + the remaining mass); default: ${DEFAULT-VALUE}.")
    String baseline;

    @Option(names = "--top-k", defaultValue = "64", description = "Log-probs kept per position by a compact baseline (default: ${DEFAULT-VALUE}).")
    int topK;

    @Option(names = "--json", description = "Print one JSON object on stdout and nothing else.")
    boolean json;

    @Mixin
    CacheOption cache;

    @Mixin
    EngineOptions threads;

    @Override
    public Integer call() {
        ScoringMode mode = ScoringMode.byId(score);
        LogProbBaseline.Kind kind = switch (baseline) {
            case "full" -> LogProbBaseline.Kind.FULL;
            case "compact" -> LogProbBaseline.Kind.COMPACT;
            default -> throw new QlabException("--baseline must be full or compact, got \"" + baseline + "\"");
        };
        TokenInput.Tokens tokens = input.load(base);
        tokens.requireWindow(ctx, mode);
        KlDivergence.Result r;
        boolean reused;
        long weightBytes;
        try (WorkerPool pool = threads.pool()) {
            String key = ModelHash.ofStrings("qlab-logprob-baseline-v1", ModelHash.of(base), ModelHash.ofTokens(tokens.ids()),
                    Integer.toString(ctx), mode.id(), kind.name(), Integer.toString(kind == LogProbBaseline.Kind.FULL ? 0 : topK));
            Path file = cache.dir().resolve("baselines").resolve(key.substring(0, 32) + ".lpb");
            LogProbBaseline b;
            reused = Files.isRegularFile(file);
            if (reused) {
                b = LogProbBaseline.open(file);
            } else {
                b = LogProbBaseline.create(new Transformer(Models.openMapped(base), pool), tokens.ids(), ctx, mode, kind, topK, key, file);
                // The reference's mapping is unmapped only once its segments are collected: without a
                // collection here its pages (1 GB for a bf16 0.5B model) stay resident beside the scored model's.
                System.gc();
            }
            Model m = Models.openMapped(model);
            weightBytes = m.weights().matrixBytes();
            r = KlDivergence.compare(new Transformer(m, pool, threads.kvTypes()), b, tokens.ids(), ctx, mode);
            if (!json) {
                spec.commandLine().getErr().printf("baseline %s (%s, %s)%n", file, kind.name().toLowerCase(), reused ? "reused" : "computed");
            }
        }
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            Map<String, Object> j = new LinkedHashMap<>();
            j.put("base", base.toString());
            j.put("model", model.toString());
            j.putAll(r.toMap());
            j.put("ctx", ctx);
            j.put("score", mode.id());
            j.put("baseline_reused", reused);
            j.put("threads", threads.count());
            j.put("weight_bytes", weightBytes);
            j.put("peak_rss_bytes", MachineInfo.peakRssBytes());
            JsonOutput.print(out, j);
        } else {
            KlDivergence.Stat kl = r.kl();
            out.printf("tokens scored         %d (%s scoring, ctx %d, %s baseline)%n", r.tokens(), mode.id(), ctx, r.baselineKind());
            out.printf("PPL(model)            %.4f +/- %.4f%n", r.pplModel(), r.pplModelSe());
            out.printf("PPL(base)             %.4f +/- %.4f%n", r.pplBase(), r.pplBaseSe());
            out.printf("PPL ratio             %.6f +/- %.6f  (paired, in log space)%n", r.pplRatio(), r.pplRatio() * r.lnPplRatioSe());
            out.printf("mean KL               %.6f +/- %.6f%n", kl.mean(), kl.se());
            String[] names = {"max", "99.9%", "99%", "95%", "90%", "median", "10%", "5%", "1%", "min"};
            for (int i = 0; i < names.length; i++) {
                out.printf("  KL %-7s           %.6f%n", names[i], kl.percentiles()[i]);
            }
            out.printf("same top token        %.4f +/- %.4f%n", r.top1Agree(), r.top1AgreeSe());
            out.printf("delta p (base top)    mean %+.5f, RMS %.5f, min %+.5f, max %+.5f%n", r.deltaP().mean(), r.deltaP().rms(),
                    r.deltaP().percentile(0.0), r.deltaP().percentile(1.0));
            if (!Double.isNaN(r.logitRelRmse())) {
                out.printf("relative logit RMSE   %.5f%n", r.logitRelRmse());
            }
            out.printf("%.1f tok/s on %d threads; weights %.1f MiB, peak RSS %.0f MiB%n", r.work().tokensPerSecond(),
                    threads.count(), weightBytes / 1048576.0, MachineInfo.peakRssBytes() / 1048576.0);
        }
        out.flush();
        return 0;
    }
}
