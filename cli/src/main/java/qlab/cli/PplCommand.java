package qlab.cli;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import qlab.engine.bench.MachineInfo;
import qlab.engine.eval.Perplexity;
import qlab.engine.eval.ScoringMode;
import qlab.engine.model.Model;
import qlab.engine.model.Transformer;
import qlab.engine.util.WorkerPool;

@Command(name = "ppl", mixinStandardHelpOptions = true,
        description = "Perplexity over non-overlapping windows, each evaluated as one batched prefill.")
final class PplCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--model", required = true, description = "Model directory, quantized file or GGUF file.")
    Path model;

    @Mixin
    TokenInput input;

    @Option(names = "--ctx", defaultValue = "512", description = "Window length (default: ${DEFAULT-VALUE}).")
    int ctx;

    @Option(names = "--score", defaultValue = "second-half",
            description = "second-half (as llama-perplexity) or all (every token but each window's first); default: ${DEFAULT-VALUE}.")
    String score;

    @Option(names = "--json", description = "Print one JSON object on stdout and nothing else.")
    boolean json;

    @Mixin
    EngineOptions threads;

    @Override
    public Integer call() {
        ScoringMode mode = ScoringMode.byId(score);
        TokenInput.Tokens tokens = input.load(model);
        Model m = Models.open(model);
        Perplexity.Result r;
        try (WorkerPool pool = threads.pool()) {
            r = Perplexity.run(new Transformer(m, pool), tokens.ids(), ctx, mode);
        }
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            Map<String, Object> j = new LinkedHashMap<>();
            j.put("model", model.toString());
            j.put("ppl", r.ppl());
            j.put("ppl_se", r.pplSe());
            j.put("mean_nll", r.meanNll());
            j.put("mean_nll_se", r.meanNllSe());
            j.put("tokens_scored", r.tokensScored());
            j.put("tokens_processed", r.work().tokensProcessed());
            j.put("ctx", ctx);
            j.put("score", mode.id());
            j.put("seconds", r.work().seconds());
            j.put("tokens_per_second", r.work().tokensPerSecond());
            j.put("threads", threads.count());
            j.put("weight_bytes", m.weights().matrixBytes());
            j.put("peak_rss_bytes", MachineInfo.peakRssBytes());
            JsonOutput.print(out, j);
        } else {
            out.printf("PPL = %.4f +/- %.4f over %d scored tokens (%s scoring, ctx %d, %s)%n", r.ppl(), r.pplSe(),
                    r.tokensScored(), mode.id(), ctx, tokens.origin());
            out.printf("%d tokens evaluated in %.1f s = %.1f tok/s on %d threads; weights %.1f MiB, peak RSS %.0f MiB%n",
                    r.work().tokensProcessed(), r.work().seconds(), r.work().tokensPerSecond(), threads.count(),
                    m.weights().matrixBytes() / 1048576.0, MachineInfo.peakRssBytes() / 1048576.0);
        }
        out.flush();
        return 0;
    }
}
