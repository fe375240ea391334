package qlab.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import qlab.engine.QlabException;
import qlab.pipeline.EvaluatorFactories;
import qlab.pipeline.EvaluatorFactory;
import qlab.pipeline.beam.SweepOptions;
import qlab.pipeline.beam.SweepPipeline;
import qlab.pipeline.beam.SweepSummary;
import qlab.pipeline.matrix.MatrixExpansion;
import qlab.pipeline.matrix.SweepFileParser;
import qlab.pipeline.matrix.SweepMatrix;

/** {@code qlab sweep configs/X.yaml}: runs a sweep matrix through the Beam pipeline. */
@Command(name = "sweep", mixinStandardHelpOptions = true,
        description = "Run a sweep file's config matrix into Parquet results, Pareto frontiers, charts and report.html.",
        footer = {"", "Example:", "  ./qlab sweep configs/quick.yaml"})
public final class SweepCommand implements Callable<Integer> {

    @Parameters(index = "0", paramLabel = "SWEEP.yaml", description = "The sweep file (see configs/quick.yaml).")
    Path sweepFile;

    @Option(names = "--runner", defaultValue = "DirectRunner", paramLabel = "RUNNER",
            description = "Beam runner (default: ${DEFAULT-VALUE}); FlinkRunner needs a build with -Pflink (docs/build.md).")
    String runner;

    @Option(names = "--out", paramLabel = "DIR", description = "Results directory (default: results/NAME, NAME from the sweep file).")
    Path out;

    @Option(names = "--cache", paramLabel = "DIR",
            description = "Cache of importance matrices and quantized checkpoints (default: OUT/.cache); "
                    + "share it between results directories to build each checkpoint once.")
    Path cache;

    @Option(names = "--parallelism", paramLabel = "N",
            description = "Workers for the parallel stages (DirectRunner; default: the runner's). A run that "
                    + "measures throughput uses 1: the DirectRunner's driver thread spins beside a measurement otherwise.")
    Integer parallelism;

    @Option(names = {"-O", "--pipeline-option"}, paramLabel = "NAME=VALUE",
            description = "A Beam or runner option, e.g. -O flinkMaster=host:8081 -O parallelism=4 (repeatable).")
    List<String> pipelineOptions = new ArrayList<>();

    @Option(names = "--no-report", description = "Skip the charts and report.html.")
    boolean noReport;

    @Option(names = "--no-progress", description = "No live progress line.")
    boolean noProgress;

    @Option(names = "--dry-run", description = "Validate the sweep file and print the configs it expands to; run nothing.")
    boolean dryRun;

    @Override
    public Integer call() {
        if (!Files.isRegularFile(sweepFile)) {
            throw new QlabException(sweepFile + ": no such sweep file");
        }
        SweepMatrix matrix = SweepFileParser.parse(sweepFile);
        Path outDir = out != null ? out : Path.of("results", matrix.name());
        SweepOptions options = options(outDir);
        if (dryRun) {
            MatrixExpansion e = MatrixExpansion.expand(matrix);
            System.out.printf("%s: %d configs (%d runnable, %d skipped, %d duplicate combinations merged)%n",
                    sweepFile, e.configs().size(), e.runnable(), e.configs().size() - e.runnable(), e.duplicates());
            e.configs().forEach(c -> System.out.println("  " + c.configId() + "  " + c.label()
                    + (c.skipped() ? "  [skipped: " + c.skipReason() + "]" : "")));
            return 0;
        }
        EvaluatorFactory evaluator = EvaluatorFactories.engine();
        SweepSummary summary = SweepPipeline.run(options, evaluator);
        System.err.print(summary.describe());
        return summary.failed() > 0 ? 1 : 0;
    }

    /** In the distribution only when built with -Pflink (cli/pom.xml). */
    static final String FLINK_RUNNER = "org.apache.beam.runners.flink.FlinkRunner";

    static boolean onClasspath(String className) {
        try {
            Class.forName(className, false, SweepCommand.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException e) {
            return false;
        }
    }

    private SweepOptions options(Path outDir) {
        if (parallelism != null && parallelism < 1) {
            throw new QlabException("--parallelism: must be at least 1, got " + parallelism);
        }
        if (runner.equals("FlinkRunner") && !onClasspath(FLINK_RUNNER)) {
            throw new QlabException("--runner FlinkRunner: the Flink runner is not in this build; add it with "
                    + "mvn -Pflink -DskipTests package (see docs/build.md)");
        }
        List<String> args = new ArrayList<>();
        args.add("--runner=" + runner);
        if (parallelism != null && runner.equals("DirectRunner")) {
            args.add("--targetParallelism=" + parallelism);
        }
        for (String o : pipelineOptions) {
            if (!o.matches("[A-Za-z][A-Za-z0-9]*=.*")) {
                throw new QlabException("--pipeline-option: expected NAME=VALUE, got \"" + o + "\"");
            }
            args.add("--" + o);
        }
        SweepOptions options;
        try {
            PipelineOptionsFactory.register(SweepOptions.class);
            options = PipelineOptionsFactory.fromArgs(args.toArray(String[]::new)).as(SweepOptions.class);
        } catch (IllegalArgumentException e) {
            String why = e.getMessage() == null ? "invalid option" : e.getMessage().lines().findFirst().orElse("");
            throw new QlabException((why.contains("runner") ? "--runner: " : "--pipeline-option: ") + why);
        }
        options.setSweepFile(sweepFile.toString());
        options.setOut(outDir.toString());
        if (cache != null) {
            options.setCacheDir(cache.toAbsolutePath().toString());
        }
        options.setReport(!noReport);
        options.setProgress(!noProgress);
        return options;
    }
}
