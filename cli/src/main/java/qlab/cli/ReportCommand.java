package qlab.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import qlab.engine.QlabException;
import qlab.pipeline.report.MarkdownReport;
import qlab.pipeline.report.SweepReport;
import qlab.pipeline.results.ResultFiles;
import qlab.pipeline.results.ResultRow;

/** {@code qlab report results/X}: report.html and charts again, or the results as Markdown tables. */
@Command(name = "report", mixinStandardHelpOptions = true,
        description = "Render sweep results as report.html and charts (the default) or as Markdown tables (--markdown).",
        footer = {"", "Example:", "  ./qlab report results/perf --markdown --into docs/performance.md"})
public final class ReportCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Parameters(arity = "1..*", paramLabel = "PATH", description = "Result files or directories (searched for *.parquet).")
    List<Path> paths;

    @Option(names = "--markdown", description = "Print Markdown tables (machine, speed, batched decode, quality) on stdout.")
    boolean markdown;

    @Option(names = "--into", paramLabel = "FILE",
            description = "With --markdown: replace the generated part of FILE (between its 'qlab report: begin' and "
                    + "'qlab report: end' comment lines) instead of printing.")
    Path into;

    @Override
    public Integer call() throws IOException {
        List<ResultRow> rows = ResultFiles.readRows(paths);
        if (into != null && !markdown) {
            throw new QlabException("--into " + into + ": needs --markdown");
        }
        if (!markdown) {
            Path dir = paths.getFirst();
            if (!Files.isDirectory(dir)) {
                throw new QlabException(dir + ": the HTML report is written into a results directory; give one first");
            }
            Path report = SweepReport.write(dir, rows, dir.toAbsolutePath().normalize().getFileName().toString());
            spec.commandLine().getOut().println(report);
            spec.commandLine().getOut().flush();
            return 0;
        }
        String command = "./qlab " + String.join(" ", spec.commandLine().getParseResult().originalArgs());
        // A sensitivity sweep's single-group rows are in its table, not among the configs reported.
        java.util.Set<String> probes = qlab.pipeline.sensitivity.SensitivityTable.probeIds(paths);
        String generated = MarkdownReport.render(rows.stream().filter(r -> !probes.contains(r.configId())).toList(), command,
                qlab.pipeline.sensitivity.AllocatedMixes.find(paths));
        if (into == null) {
            spec.commandLine().getOut().print(generated);
            spec.commandLine().getOut().flush();
            return 0;
        }
        if (!Files.isRegularFile(into)) {
            throw new QlabException(into + ": no such file");
        }
        String page = MarkdownReport.replaceGenerated(Files.readString(into, StandardCharsets.UTF_8), generated);
        if (page == null) {
            throw new QlabException(into + ": no '" + MarkdownReport.BEGIN + "' line followed by '" + MarkdownReport.END + "'");
        }
        Files.writeString(into, page, StandardCharsets.UTF_8);
        spec.commandLine().getErr().println("qlab: tables of " + rows.size() + " rows written into " + into);
        return 0;
    }
}
