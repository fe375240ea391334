package qlab.cli;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import qlab.engine.QlabException;
import qlab.engine.model.ModelHash;
import qlab.pipeline.QuantSpec;
import qlab.pipeline.engine.EngineEvaluator;
import qlab.pipeline.pareto.ParetoFrontier;
import qlab.quant.checkpoint.QuantPlan;
import picocli.CommandLine.Parameters;
import qlab.pipeline.pareto.FrontierTable;
import qlab.pipeline.pareto.ResultHistory;
import qlab.pipeline.results.ResultFiles;
import qlab.pipeline.results.ResultRow;

/** {@code qlab pareto results/...}: the Pareto frontiers of any set of result files. */
@Command(name = "pareto", mixinStandardHelpOptions = true,
        description = "Print the Pareto frontiers (bits/weight vs KL and vs perplexity, decode tok/s vs KL) of sweep results.",
        footer = {"", "Example:", "  ./qlab pareto results/quick"})
public final class ParetoCommand implements Callable<Integer> {

    @Parameters(arity = "1..*", paramLabel = "PATH", description = "Result files or directories.")
    List<Path> paths;

    @Option(names = "--json", description = "Print the frontiers as JSON on stdout.")
    boolean json;

    @Option(names = "--all-rows", description = "Use every row, not only the newest row of each config.")
    boolean allRows;

    @Option(names = "--export-gguf", paramLabel = "DIR",
            description = "Write each config on the bits-per-weight vs KL frontier as a GGUF into DIR (needs --model).")
    Path exportDir;

    @Option(names = "--model", description = "With --export-gguf: the model the sweep quantized (directory or GGUF).")
    Path model;

    @Option(names = "--imatrix", description = "With --export-gguf: the importance matrix of the configs that used one.")
    Path imatrix;

    @Override
    public Integer call() {
        // A sensitivity sweep's single-group rows measure one group, not a quantization to choose.
        if (ResultFiles.find(paths).isEmpty()) {
            throw new QlabException(String.join(", ", paths.stream().map(Path::toString).toList())
                    + ": no result files (.parquet) found; a sweep writes them (./qlab sweep FILE)");
        }
        java.util.Set<String> probes = qlab.pipeline.sensitivity.SensitivityTable.probeIds(paths);
        List<ResultRow> rows = ResultFiles.readRows(paths).stream().filter(r -> !probes.contains(r.configId())).toList();
        List<ResultRow> used = allRows ? rows : ResultHistory.latest(rows);
        if (json) {
            System.out.print(FrontierTable.json(used));
        } else {
            int files = ResultFiles.find(paths).size();
            System.out.printf("%d rows from %d file(s)%s%n%n", rows.size(), files,
                    allRows ? "" : ", newest row of each of " + used.size() + " configs");
            System.out.print(FrontierTable.text(used));
        }
        if (exportDir != null) {
            exportFrontier(used);
        }
        return 0;
    }

    /**
     * Exports the bits-per-weight vs KL frontier: one GGUF per distinct plan (a config measured
     * with f32 and int8 activations is one file). Configs whose formats have no ggml type, or that
     * used an importance matrix when none is given, are listed as skipped.
     */
    private void exportFrontier(List<ResultRow> used) {
        if (model == null) {
            throw new QlabException("--export-gguf needs --model, the model the sweep quantized (results record only its hash)");
        }
        List<ResultRow> frontier = ParetoFrontier.frontier(used, ParetoFrontier.BPW_KL);
        Models.requireExists(model);
        String hash = ModelHash.of(model);
        java.util.Set<String> measuredOn = new java.util.TreeSet<>();
        frontier.forEach(r -> measuredOn.add(r.modelHash()));
        if (!frontier.isEmpty() && !measuredOn.contains(hash)) {
            // The rows record only the hash of what they measured; exporting from another model would
            // label its files with measurements they never had.
            throw new QlabException("--model " + model + " is not the model these results were measured on: its hash is "
                    + shortHash(hash) + ", the frontier's rows have " + String.join(", ", measuredOn.stream()
                    .map(ParetoCommand::shortHash).toList()) + " (" + String.join(", ", frontier.stream()
                    .map(ResultRow::modelId).distinct().toList()) + "; config.json and every .safetensors file of a "
                    + "model directory count)");
        }
        java.util.Set<String> done = new java.util.LinkedHashSet<>();
        for (ResultRow r : frontier) {
            QuantPlan plan = EngineEvaluator.plan(new QuantSpec(r.format(), r.groupSize(), r.tensorOverrides()));
            String key = plan + (r.imatrix() == null ? "" : " imx=" + r.imatrix());
            if (!hash.equals(r.modelHash())) {
                System.err.printf("skipped %s: measured on model %s (%s), not on --model%n", key, r.modelId(),
                        shortHash(r.modelHash()));
                continue;
            }
            if (!done.add(key)) {
                continue;
            }
            if (r.imatrix() != null && imatrix == null) {
                System.err.printf("skipped %s: it used importance matrix %s; give it with --imatrix%n", key, r.imatrix());
                continue;
            }
            Path out = exportDir.resolve(key.replaceAll("[^A-Za-z0-9_.=+-]", "_") + ".gguf");
            List<String> args = new java.util.ArrayList<>(List.of("export", "--model", model.toString(), "--format",
                    plan.toString(), "--out", out.toString()));
            if (r.imatrix() != null) {
                args.addAll(List.of("--imatrix", imatrix.toString()));
            }
            java.io.StringWriter err = new java.io.StringWriter();
            picocli.CommandLine cl = Main.commandLine();
            cl.setErr(new java.io.PrintWriter(err, true));
            int exit = cl.execute(args.toArray(new String[0]));
            System.err.print(exit == 0 ? err : "skipped " + key + ": " + err.toString().replaceFirst("^qlab: ", ""));
        }
    }

    private static String shortHash(String hash) {
        return hash == null ? "none" : hash.substring(0, Math.min(12, hash.length()));
    }
}
