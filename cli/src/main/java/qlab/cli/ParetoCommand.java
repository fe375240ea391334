package qlab.cli;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
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

    @Override
    public Integer call() {
        List<ResultRow> rows = ResultFiles.readRows(paths);
        List<ResultRow> used = allRows ? rows : ResultHistory.latest(rows);
        if (json) {
            System.out.print(FrontierTable.json(used));
        } else {
            int files = ResultFiles.find(paths).size();
            System.out.printf("%d rows from %d file(s)%s%n%n", rows.size(), files,
                    allRows ? "" : ", newest row of each of " + used.size() + " configs");
            System.out.print(FrontierTable.text(used));
        }
        return 0;
    }
}
