package qlab.cli;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import qlab.engine.QlabException;
import qlab.engine.model.Greedy;
import qlab.engine.model.KvCache;
import qlab.engine.model.Model;
import qlab.engine.model.Transformer;
import qlab.engine.util.WorkerPool;

@Command(name = "generate", mixinStandardHelpOptions = true,
        description = "Continue a prompt greedily and print the new tokens.")
final class GenerateCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--model", required = true, description = "Model directory or quantized file.")
    Path model;

    @Option(names = "--ids", required = true, description = "Prompt token ids, e.g. 1,2,3.")
    String ids;

    @Option(names = "--max-tokens", defaultValue = "32", description = "New tokens to generate (default: ${DEFAULT-VALUE}).")
    int maxTokens;

    @Option(names = "--json", description = "Print one JSON object on stdout and nothing else.")
    boolean json;

    @Mixin
    ThreadsOption threads;

    @Override
    public Integer call() {
        int[] prompt = IdList.parse("--ids", ids);
        if (maxTokens < 1) {
            throw new QlabException("--max-tokens must be at least 1, got " + maxTokens);
        }
        Model m = Models.open(model);
        int vocab = m.config().vocabSize();
        int[] out;
        long t0;
        long t1;
        long t2;
        try (WorkerPool pool = threads.pool()) {
            Transformer tf = new Transformer(m, pool);
            KvCache cache = tf.newCache(prompt.length + maxTokens);
            t0 = System.nanoTime();
            float[] logits = tf.forward(prompt, cache, false);
            t1 = System.nanoTime();
            out = Greedy.continueGreedy(tf, cache, logits, vocab, maxTokens);
            t2 = System.nanoTime();
        }
        PrintWriter w = spec.commandLine().getOut();
        double decodeTps = maxTokens > 1 ? (maxTokens - 1) * 1e9 / (t2 - t1) : Double.NaN;
        if (json) {
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("ids", out);
            r.put("prompt_ids", prompt);
            r.put("prefill_ms", (t1 - t0) / 1e6);
            r.put("decode_tps", Double.isNaN(decodeTps) ? null : decodeTps);
            r.put("threads", threads.count());
            JsonOutput.print(w, r);
        } else {
            w.println(String.join(" ", Arrays.stream(out).mapToObj(Integer::toString).toList()));
            w.flush();
            spec.commandLine().getErr().printf("prompt %d tokens in %.1f ms; %d new tokens%s%n", prompt.length,
                    (t1 - t0) / 1e6, maxTokens, Double.isNaN(decodeTps) ? "" : String.format(" at %.1f tok/s", decodeTps));
        }
        return 0;
    }
}
