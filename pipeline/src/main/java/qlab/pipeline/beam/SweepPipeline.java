package qlab.pipeline.beam;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.apache.beam.runners.direct.DirectOptions;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.metrics.MetricNameFilter;
import org.apache.beam.sdk.metrics.MetricResult;
import org.apache.beam.sdk.metrics.MetricsFilter;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.values.PCollection;
import qlab.engine.QlabException;
import qlab.pipeline.EvaluatorFactory;
import qlab.pipeline.matrix.MatrixExpansion;
import qlab.pipeline.matrix.Sensitivity;
import qlab.pipeline.sensitivity.SensitivityTable;
import qlab.pipeline.matrix.SweepConfig;
import qlab.pipeline.matrix.SweepFileParser;
import qlab.pipeline.matrix.SweepMatrix;
import qlab.pipeline.report.SweepReport;
import qlab.pipeline.results.ConfigOutcome;
import qlab.pipeline.results.Journal;
import qlab.pipeline.results.ResultFiles;
import qlab.pipeline.results.ResultRow;
import qlab.pipeline.results.ResultStore;
import qlab.pipeline.results.RunInfo;

/**
 * The sweep: a sweep file in, one Parquet file of result rows per run out, then the report.
 * <pre>
 *   ExpandMatrix → PrepareModels → Quantize → EvaluateQuality → MeasureThroughput → AnnotatePareto → WriteResults
 * </pre>
 * Before the pipeline starts, the results directory is locked, the journals of killed runs are
 * recovered, and its rows decide which configs are already done. After it finishes, this run's
 * journal is deleted and the charts and report are regenerated from every run in the directory.
 */
public final class SweepPipeline {

    private static final long POLL_MILLIS = 500;

    private SweepPipeline() {
    }

    public static void main(String[] args) {
        PipelineOptionsFactory.register(SweepOptions.class);
        SweepOptions options = PipelineOptionsFactory.fromArgs(args).withValidation().as(SweepOptions.class);
        System.err.print(run(options).describe());
    }

    /** Runs with the evaluator factory class named by {@code --evaluatorFactory}. */
    public static SweepSummary run(SweepOptions options) {
        String name = options.getEvaluatorFactory();
        if (name == null || name.isBlank()) {
            throw new QlabException("--evaluatorFactory: no evaluator factory class given");
        }
        EvaluatorFactory factory;
        try {
            factory = (EvaluatorFactory) Class.forName(name).getDeclaredConstructor().newInstance();
        } catch (ReflectiveOperationException | ClassCastException e) {
            throw new QlabException("--evaluatorFactory: cannot make a qlab.pipeline.EvaluatorFactory from \""
                    + name + "\": " + e);
        }
        return run(options, factory);
    }

    public static SweepSummary run(SweepOptions options, EvaluatorFactory factory) {
        SweepMatrix matrix = SweepFileParser.parse(Path.of(options.getSweepFile()));
        MatrixExpansion expansion = requireRunnable(matrix);
        factory.check(matrix.model());
        ResultStore store = new ResultStore(Path.of(options.getOut()));
        PrintStream err = System.err;
        ResultStore.Lock lock = store.lock();
        try {
            List<String> recovered = store.recoverInterrupted();
            List<ResultRow> earlierRows = store.rows();
            Set<String> okBefore = ResultStore.okKeys(earlierRows);
            Set<String> skippedBefore = ResultStore.skippedIds(earlierRows);

            List<SweepConfig> toRun = new ArrayList<>();
            int newSkipped = 0;
            Set<String> okIds = new HashSet<>();
            earlierRows.stream().filter(ResultRow::ok).forEach(r -> okIds.add(r.configId()));
            for (SweepConfig c : expansion.configs()) {
                if (c.skipped()) {
                    newSkipped += skippedBefore.contains(c.configId()) ? 0 : 1;
                } else if (!okIds.contains(c.configId())) {
                    // An ok row with another model hash (the model directory changed) is re-run;
                    // PrepareModels makes that decision once the hash is known.
                    toRun.add(c);
                }
            }
            SweepPlan plan = SweepPlan.of(toRun, newSkipped);
            Path reportFile = null;
            if (plan.configs() == 0) {
                writeSensitivityTable(matrix, expansion, store, earlierRows);
                if (options.getReport()) {
                    reportFile = SweepReport.write(store.root(), earlierRows, matrix.name());
                }
                return new SweepSummary(null, store.root(), null, 0, 0, 0, 0, recovered, 0, 0, reportFile, List.of());
            }

            RunInfo run = RunInfo.start();
            Path journalDir = store.journalDir(run.runId());
            Files.createDirectories(journalDir);
            Journal journal = new Journal(journalDir.toString(), run);
            String cacheDir = options.getCacheDir() != null ? options.getCacheDir() : store.cacheDir().toString();
            List<AnnotatePareto.Point> earlierPoints = earlierRows.stream().filter(ResultRow::ok)
                    .map(AnnotatePareto.Point::of).toList();

            Pipeline p = Pipeline.create(options);
            PCollection<ConfigOutcome> outcomes = p
                    .apply("ExpandMatrix", new ExpandMatrix(matrix, skippedBefore, journal))
                    .apply("PrepareModels", new PrepareModels(factory, cacheDir, journal, okBefore))
                    .apply("Quantize", new Quantize(factory, cacheDir, journal))
                    .apply("EvaluateQuality", new EvaluateQuality(factory, cacheDir, journal))
                    .apply("MeasureThroughput", new MeasureThroughput(factory, cacheDir, journal))
                    .apply("AnnotatePareto", new AnnotatePareto(earlierPoints));
            Path runDir = store.runDir(run.runId());
            outcomes.apply("WriteResults", new WriteResults(runDir.toString(), run));

            Map<String, Long> counters = execute(p, options, plan, journalDir, err);
            ResultStore.deleteTree(journalDir);
            ResultStore.deleteTree(runDir.resolve(WriteResults.TEMP_DIR));
            Path resultFile = runDir.resolve(ResultStore.RESULT_FILE);
            List<String> failures = ResultFiles.readRows(List.of(resultFile)).stream()
                    .filter(r -> "failed".equals(r.status()))
                    .map(r -> r.configId() + " (" + r.label() + "): " + r.statusReason()).toList();
            writeSensitivityTable(matrix, expansion, store, store.rows());
            if (options.getReport()) {
                reportFile = SweepReport.write(store.root(), store.rows(), matrix.name());
            }
            long work = counters.entrySet().stream().filter(e -> e.getKey().startsWith(Outcomes.WORK_MS_PREFIX))
                    .mapToLong(Map.Entry::getValue).sum();
            return new SweepSummary(run.runId(), store.root(), resultFile,
                    counters.getOrDefault(Outcomes.OK, 0L), counters.getOrDefault(Outcomes.SKIPPED, 0L),
                    counters.getOrDefault(Outcomes.FAILED, 0L), counters.getOrDefault(Outcomes.RESUMED, 0L),
                    recovered, counters.getOrDefault(WALL_MS, 0L), work, reportFile, failures);
        } catch (QlabException e) {
            throw e;
        } catch (Exception e) {
            throw new QlabException(store.root() + ": sweep failed: " + e.getMessage(), e);
        } finally {
            lock.close();
        }
    }

    /**
     * For a sensitivity sweep, {@code tables/sensitivity.parquet} from its rows so far (a resumed
     * sweep rewrites it with every row); nothing for an ordinary sweep or before the reference is measured.
     */
    private static void writeSensitivityTable(SweepMatrix matrix, MatrixExpansion expansion, ResultStore store,
                                              List<ResultRow> rows) {
        if (matrix.sensitivity() == null) {
            return;
        }
        Set<String> ids = new HashSet<>();
        expansion.configs().forEach(c -> ids.add(c.configId()));
        SensitivityTable.of(matrix.sensitivity(), Sensitivity.modelConfig(matrix.model()), rows, ids)
                .ifPresent(t -> t.write(SensitivityTable.file(store.root())));
    }

    /**
     * The matrix's configs, or a user error naming the axis if none of them can run: a config is
     * skipped only when a format of its mix does not support its group size.
     */
    static MatrixExpansion requireRunnable(SweepMatrix matrix) {
        MatrixExpansion expansion = MatrixExpansion.expand(matrix);
        if (expansion.runnable() == 0) {
            String first = expansion.configs().isEmpty() ? "" : "; " + expansion.configs().getFirst().skipReason();
            throw new QlabException(matrix.sourceFile() + ": no runnable config: no format of \"formats\" supports a size in "
                    + "\"group_sizes\" " + matrix.groupSizes() + first);
        }
        return expansion;
    }

    private static final String WALL_MS = "\u0000wall_ms";
    /** {@code -Dqlab.sweep.directChecks=true} keeps the DirectRunner's immutability and encodability checks on. */
    public static final String DIRECT_CHECKS_PROPERTY = "qlab.sweep.directChecks";

    /**
     * Runs the pipeline on its own thread while this one draws progress, and returns the final
     * counters. Progress combines the pipeline's counters (committed per bundle, so they lag) with
     * the number of journal files, which grows the moment each config finishes; the latter also
     * works on runners whose {@code run()} blocks until the end (Flink in local mode).
     */
    private static Map<String, Long> execute(Pipeline p, SweepOptions options, SweepPlan plan, Path journalDir,
                                             PrintStream err) {
        if (options.getRunner().getSimpleName().equals("DirectRunner")) {
            DirectOptions direct = options.as(DirectOptions.class);
            // Return from run() at once, so that its metrics can be read while it works.
            direct.setBlockOnRun(false);
            if (!Boolean.getBoolean(DIRECT_CHECKS_PROPERTY)) {
                // The DirectRunner's model checks re-encode every element after every transform;
                // they are for testing a pipeline (SweepPipelineTest runs with them on).
                direct.setEnforceImmutability(false);
                direct.setEnforceEncodability(false);
            }
            if (plan.throughputs() > 0 && direct.getTargetParallelism() > 1) {
                // The DirectRunner's driver shares the worker pool and re-submits itself without
                // pause while any work is outstanding: with two or more workers it keeps a core busy
                // beside every throughput measurement (half the tok/s on 2 cores). With one worker it
                // cannot run while a measurement does. Quality work loses little: each evaluation
                // already uses every core.
                err.println("DirectRunner: 1 worker instead of " + direct.getTargetParallelism()
                        + ", so that nothing runs beside the throughput measurements");
                direct.setTargetParallelism(1);
            }
        }
        SweepProgress progress = options.getProgress() ? new SweepProgress(plan, err) : null;
        AtomicReference<PipelineResult> running = new AtomicReference<>();
        long start = System.nanoTime();
        CompletableFuture<PipelineResult> done = CompletableFuture.supplyAsync(() -> {
            PipelineResult r = p.run();
            running.set(r);
            r.waitUntilFinish();
            return r;
        }, command -> {
            Thread t = new Thread(command, "sweep-pipeline");
            t.setDaemon(true);
            t.start();
        });
        PipelineResult result;
        try {
            while (true) {
                try {
                    result = done.get(POLL_MILLIS, TimeUnit.MILLISECONDS);
                    break;
                } catch (TimeoutException stillRunning) {
                    if (progress != null) {
                        PipelineResult r = running.get();
                        progress.update(r == null ? Map.of() : counters(r), journalFiles(journalDir));
                    }
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new QlabException("sweep interrupted (rows finished so far are recovered by the next run)", e);
        } catch (ExecutionException e) {
            if (progress != null) {
                progress.end();
            }
            throw new QlabException("sweep stopped: " + stopReason(e.getCause())
                    + " (rows finished so far are kept and recovered by the next run into the same --out)", e);
        }
        if (result.getState() != PipelineResult.State.DONE) {
            throw new QlabException("sweep ended in state " + result.getState());
        }
        Map<String, Long> counters = new HashMap<>(counters(result));
        if (progress != null) {
            progress.update(counters, journalFiles(journalDir));
            progress.end();
        }
        counters.put(WALL_MS, (System.nanoTime() - start) / 1_000_000);
        return counters;
    }

    private static long journalFiles(Path journalDir) {
        try (Stream<Path> files = Files.list(journalDir)) {
            return files.filter(f -> f.getFileName().toString().endsWith(".parquet")).count();
        } catch (IOException e) {
            return 0;
        }
    }

    private static Map<String, Long> counters(PipelineResult result) {
        Map<String, Long> values = new HashMap<>();
        try {
            for (MetricResult<Long> c : result.metrics().queryMetrics(MetricsFilter.builder()
                    .addNameFilter(MetricNameFilter.inNamespace(Outcomes.NAMESPACE)).build()).getCounters()) {
                Long v = c.getAttempted();
                values.merge(c.getName().getName(), v == null ? 0L : v, Long::sum);
            }
        } catch (UnsupportedOperationException e) {
            // A runner without live metrics: progress shows zeros until the end.
        }
        return values;
    }

    /**
     * Why a pipeline stopped, in one line: a write that failed names its file (a full disk, say),
     * so the reason is taken where the chain still knows the path, not from the bare IOException.
     */
    static String stopReason(Throwable t) {
        Throwable cause = t;
        while (true) {
            if (cause instanceof QlabException q) {
                return q.getMessage();
            }
            if (cause instanceof java.io.UncheckedIOException u && u.getCause() != null) {
                return u.getMessage() + ": " + qlab.engine.util.IoErrors.why(u.getCause());
            }
            if (cause.getCause() == null || cause instanceof Error) {
                return cause.toString().lines().findFirst().orElse(cause.getClass().getName());
            }
            cause = cause.getCause();
        }
    }
}
