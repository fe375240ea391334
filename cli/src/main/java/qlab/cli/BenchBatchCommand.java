package qlab.cli;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
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
import qlab.engine.bench.BatchBench;
import qlab.engine.bench.MachineInfo;
import qlab.engine.model.Model;
import qlab.engine.model.Transformer;
import qlab.engine.util.WorkerPool;

@Command(name = "bench-batch", mixinStandardHelpOptions = true,
        description = "Batched decode speed: B sequences with their own caches and prompt lengths decode in lock-step.",
        footer = {"", "Example:",
                "  ./qlab bench-batch --model models/q05b/q4_0.safetensors --batch 1,4,8,16 \\",
                "      --threads 2"})
final class BenchBatchCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--model", required = true, description = "Model directory, quantized file or GGUF file.")
    Path model;

    @Option(names = "--batch", defaultValue = "1,2,4,8,16,32", split = ",", description = "Batch sizes (default: ${DEFAULT-VALUE}).")
    List<Integer> batches;

    @Option(names = "--prompt-tokens", defaultValue = "32", description = "Base prompt length; sequences vary around it (default: ${DEFAULT-VALUE}).")
    int promptTokens;

    @Option(names = "--steps", defaultValue = "32", description = "Lock-step decode steps timed per repetition (default: ${DEFAULT-VALUE}).")
    int steps;

    @Option(names = "--reps", defaultValue = "3", description = "Timed repetitions after a warm-up (default: ${DEFAULT-VALUE}).")
    int reps;

    @Option(names = "--json", description = "Print one JSON object on stdout and nothing else.")
    boolean json;

    @Mixin
    EngineOptions threads;

    @Override
    public Integer call() {
        for (int b : batches) {
            if (b < 1) {
                throw new QlabException("--batch sizes must be at least 1, got " + b);
            }
        }
        if (steps < 1 || reps < 1 || promptTokens < 1) {
            throw new QlabException("--steps, --reps and --prompt-tokens must be at least 1");
        }
        Model m = Models.open(model);
        List<BatchBench.Result> results = new ArrayList<>();
        try (WorkerPool pool = threads.pool()) {
            Transformer tf = new Transformer(m, pool, threads.kvTypes());
            for (int b : batches) {
                results.add(BatchBench.run(tf, b, promptTokens, steps, reps, 7));
            }
        }
        PrintWriter out = spec.commandLine().getOut();
        MachineInfo machine = MachineInfo.current();
        if (json) {
            Map<String, Object> j = new LinkedHashMap<>();
            j.put("model", model.toString());
            j.put("threads", threads.count());
            j.put("activations", threads.activations());
            List<Map<String, Object>> rows = new ArrayList<>();
            for (BatchBench.Result r : results) {
                Map<String, Object> row = new LinkedHashMap<>();
                row.put("batch", r.batch());
                row.put("tps", r.tps().median());
                row.put("tps_min", r.tps().min());
                row.put("tps_max", r.tps().max());
                row.put("ms_per_step", r.msPerStep().median());
                rows.add(row);
            }
            j.put("results", rows);
            j.put("weight_bytes", m.weights().decodeBytes());
            j.put("jdk", machine.jdk());
            j.put("cpu", machine.cpu());
            j.put("peak_rss_bytes", MachineInfo.peakRssBytes());
            JsonOutput.print(out, j);
        } else {
            out.printf("%s, %d threads, %s activations, %s, JDK %s%n", model, threads.count(), threads.activations(),
                    machine.cpu(), machine.jdk());
            out.printf("%6s %12s %12s %12s %12s%n", "batch", "tok/s", "min", "max", "ms/step");
            double base = results.get(0).tps().median();
            for (BatchBench.Result r : results) {
                out.printf("%6d %12.1f %12.1f %12.1f %12.2f   x%.2f%n", r.batch(), r.tps().median(), r.tps().min(), r.tps().max(),
                        r.msPerStep().median(), r.tps().median() / base);
            }
        }
        out.flush();
        return 0;
    }
}
