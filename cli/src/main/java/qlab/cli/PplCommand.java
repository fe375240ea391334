package qlab.cli;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import qlab.engine.QlabException;
import qlab.engine.bench.MachineInfo;
import qlab.engine.eval.Perplexity;
import qlab.engine.eval.ScoringMode;
import qlab.engine.eval.UnigramModel;
import qlab.engine.model.Model;
import qlab.engine.model.Transformer;
import qlab.engine.tokenizer.Tokenizer;
import qlab.engine.train.TrainRun;
import qlab.engine.util.WorkerPool;

@Command(name = "ppl", mixinStandardHelpOptions = true,
        description = "Perplexity of a model over a text, in non-overlapping windows scored as llama-perplexity scores them.",
        footer = {"", "Example:",
                "  ./qlab ppl --model models/q05b/q4_0.safetensors \\",
                "      --text datasets/eval/en-prose.txt --max-tokens 2048"})
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

    @Option(names = "--unigram", arity = "1..*", paramLabel = "FILE",
            description = "Also score the same tokens with an add-one unigram model over the tokenizer's vocabulary, "
                    + "counted on these files as ./qlab train reads them (each file's training part, then <|endoftext|>).")
    List<Path> unigram;

    @Option(names = "--json", description = "Print one JSON object on stdout and nothing else.")
    boolean json;

    @Mixin
    EngineOptions threads;

    @Override
    public Integer call() {
        ScoringMode mode = ScoringMode.byId(score);
        TokenInput.Tokens tokens = input.load(model);
        tokens.requireWindow(ctx, mode);
        UnigramModel uni = unigram == null ? null : fitUnigram(tokens);
        Perplexity.Result u = uni == null ? null : uni.perplexity(tokens.ids(), ctx, mode);
        Model m = Models.open(model);
        Perplexity.Result r;
        try (WorkerPool pool = threads.pool()) {
            r = Perplexity.run(new Transformer(m, pool, threads.kvTypes()), tokens.ids(), ctx, mode);
        }
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            Map<String, Object> j = new LinkedHashMap<>();
            j.put("model", model.toString());
            putScores(j, r);
            j.put("tokens_processed", r.work().tokensProcessed());
            j.put("ctx", ctx);
            j.put("score", mode.id());
            j.put("seconds", r.work().seconds());
            j.put("tokens_per_second", r.work().tokensPerSecond());
            j.put("threads", threads.count());
            j.put("weight_bytes", m.weights().matrixBytes());
            j.put("peak_rss_bytes", MachineInfo.peakRssBytes());
            if (uni != null) {
                Map<String, Object> uj = new LinkedHashMap<>();
                putScores(uj, u);
                uj.put("tokens_counted", uni.tokensCounted());
                uj.put("vocab", uni.vocabSize());
                uj.put("files", unigram.stream().map(Path::toString).toList());
                j.put("unigram", uj);
                j.put("ppl_over_unigram", r.ppl() / u.ppl());
            }
            JsonOutput.print(out, j);
        } else {
            out.printf("PPL = %.4f +/- %.4f over %d scored tokens (%s scoring, ctx %d, %s)%n", r.ppl(), r.pplSe(),
                    r.tokensScored(), mode.id(), ctx, tokens.origin());
            out.printf("%d tokens evaluated in %.1f s = %.1f tok/s on %d threads; weights %.1f MiB, peak RSS %.0f MiB%n",
                    r.work().tokensProcessed(), r.work().seconds(), r.work().tokensPerSecond(), threads.count(),
                    m.weights().matrixBytes() / 1048576.0, MachineInfo.peakRssBytes() / 1048576.0);
            if (uni != null) {
                out.printf("unigram PPL = %.4f +/- %.4f over the same %d tokens (add-one over %d tokens of vocabulary, "
                        + "%d tokens counted in %d file(s)); model/unigram = %.4f%n", u.ppl(), u.pplSe(), u.tokensScored(),
                        uni.vocabSize(), uni.tokensCounted(), unigram.size(), r.ppl() / u.ppl());
            }
        }
        out.flush();
        return 0;
    }

    private static void putScores(Map<String, Object> j, Perplexity.Result r) {
        j.put("ppl", r.ppl());
        j.put("ppl_se", r.pplSe());
        j.put("mean_nll", r.meanNll());
        j.put("mean_nll_se", r.meanNllSe());
        j.put("tokens_scored", r.tokensScored());
    }

    /** The unigram model counted on the --unigram files, tokenized by the model's tokenizer as training does. */
    private UnigramModel fitUnigram(TokenInput.Tokens tokens) {
        Tokenizer tok = TextTokens.require(model);
        Path tokenizerFile = TextTokens.locate(model).orElse(model);
        UnigramModel uni = UnigramModel.fit(TrainRun.trainingTokens(tok, unigram, tokenizerFile), tok.vocabSize());
        for (int id : tokens.ids()) {
            if (id < 0 || id >= uni.vocabSize()) {
                throw new QlabException(tokens.file() + ": token id " + id + " is outside the tokenizer's vocabulary of "
                        + uni.vocabSize() + " (--unigram scores the tokenizer's ids)");
            }
        }
        return uni;
    }
}
