package qlab.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import qlab.engine.QlabException;
import qlab.pipeline.matrix.SweepFileParser;
import qlab.pipeline.matrix.SweepMatrix;
import qlab.pipeline.sensitivity.AllocatedMixes;
import qlab.pipeline.sensitivity.Allocation;
import qlab.pipeline.sensitivity.SensitivityTable;

/** {@code qlab allocate results/X --budgets 3.5,4.5}: the mix of least predicted KL under each size budget. */
@Command(name = "allocate", mixinStandardHelpOptions = true,
        description = "Choose one format per tensor group under size budgets, from a sensitivity sweep's results (least predicted KL).",
        footer = {"", "Example:", "  ./qlab allocate results/sensitivity --budgets 4.5,5.5,6.5"})
public final class AllocateCommand implements Callable<Integer> {

    @Parameters(index = "0", paramLabel = "RESULTS", description = "The results directory of a sensitivity sweep (or its tables/sensitivity.parquet).")
    Path results;

    @Option(names = "--budgets", required = true, split = ",", paramLabel = "BUDGET",
            description = "Budgets, comma-separated: bits per weight (4.5), or bytes with a unit (350000B, 120KiB, 1.5MiB, 2GiB).")
    List<String> budgets;

    @Option(names = "--sweep-out", paramLabel = "FILE",
            description = "Also write a sweep file that measures the mixes beside the uniform candidates (needs --from).")
    Path sweepOut;

    @Option(names = "--from", paramLabel = "SWEEP_FILE", description = "With --sweep-out: the sensitivity sweep file the results came from.")
    Path from;

    @Option(names = "--compare", split = ",", paramLabel = "FORMAT",
            description = "With --sweep-out: more formats to measure beside the mixes, e.g. llama.cpp recipes and hand-written mixes (Q4_K_M,q4_0+attn=q8_0).")
    List<String> compare = new ArrayList<>();

    @Override
    public Integer call() throws IOException {
        if (sweepOut != null && from == null) {
            throw new QlabException("--sweep-out " + sweepOut + ": needs --from, the sensitivity sweep file");
        }
        if (!compare.isEmpty() && sweepOut == null) {
            throw new QlabException("--compare: needs --sweep-out, the sweep file that measures them");
        }
        for (String f : compare) {
            try {
                qlab.quant.checkpoint.QuantPlan.parse(f);
            } catch (QlabException e) {
                throw new QlabException("--compare: " + e.getMessage());
            }
        }
        SweepMatrix matrix = from == null ? null : SweepFileParser.parse(from);
        if (matrix != null && matrix.sensitivity() == null) {
            throw new QlabException(from + ": not a sensitivity sweep file (it has no \"mode: sensitivity\")");
        }
        SensitivityTable table = SensitivityTable.read(results);
        List<Allocation.Group> groups = Allocation.groups(table);
        long weights = Allocation.weights(groups);
        double referenceKl = table.entries().stream().filter(e -> e.klIncrease() == 0.0 && e.configId() == null)
                .mapToDouble(SensitivityTable.Entry::klMean).findFirst().orElse(0.0);
        Integer groupSize = table.entries().stream().map(SensitivityTable.Entry::groupSize)
                .filter(java.util.Objects::nonNull).findFirst().orElse(null);
        long smallest = groups.stream().mapToLong(g -> g.options().stream().mapToLong(Allocation.Option::bytes).min().orElseThrow()).sum();

        System.out.printf(Locale.ROOT, "%d groups, %d weights, reference %s (KL %.6f); formats measured: %s%n%n",
                groups.size(), weights, table.reference(), referenceKl,
                String.join(", ", table.entries().stream().map(SensitivityTable.Entry::planFormat).distinct().toList()));
        List<AllocatedMixes.Mix> mixes = new ArrayList<>();
        for (String b : budgets) {
            long budget = budgetBytes(b, weights);
            Optional<Allocation.Mix> best = Allocation.best(groups, budget);
            if (best.isEmpty()) {
                System.out.printf(Locale.ROOT, "budget %s: no mix fits (the smallest is %.3f bits/weight, %d bytes)%n%n",
                        b, smallest * 8.0 / weights, smallest);
                continue;
            }
            Allocation.Mix m = best.get();
            String plan = Allocation.plan(groups, m);
            double bpw = m.bytes() * 8.0 / weights;
            double predicted = referenceKl + m.predictedKl();
            mixes.add(new AllocatedMixes.Mix(b, budget, plan, plan.replaceAll("/g\\d+", ""), groupSize, m.bytes(), bpw, predicted));
            System.out.printf(Locale.ROOT, "budget %s (%d bytes): %.3f bits/weight, %d bytes, predicted KL %.6f%n  %s%n%n",
                    b, budget, bpw, m.bytes(), predicted, plan);
        }
        AllocatedMixes allocated = new AllocatedMixes(mixes);
        Path dir = Files.isDirectory(results) ? results : results.toAbsolutePath().getParent().getParent();
        allocated.write(AllocatedMixes.file(dir));
        System.err.println("qlab: " + mixes.size() + " mix(es) written to " + AllocatedMixes.file(dir));
        if (sweepOut != null) {
            Path parent = sweepOut.toAbsolutePath().getParent();
            Files.createDirectories(parent);
            Files.writeString(sweepOut, allocated.verificationSweep(matrix, compare, parent));
            System.err.println("qlab: measure them with ./qlab sweep " + sweepOut);
        }
        return 0;
    }

    /** A budget in bytes: bits per weight over {@code weights}, or a byte count with its unit. */
    static long budgetBytes(String text, long weights) {
        String t = text.trim();
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("([0-9]+(?:\\.[0-9]+)?)(B|KiB|MiB|GiB)?").matcher(t);
        if (!m.matches()) {
            throw new QlabException("--budgets: \"" + text + "\" is neither bits per weight (4.5) nor bytes with a unit (350000B, 1.5MiB)");
        }
        double v = Double.parseDouble(m.group(1));
        if (m.group(2) == null) {
            if (v <= 0 || v > 64) {
                throw new QlabException("--budgets: " + text + " bits per weight is outside (0, 64]");
            }
            return (long) Math.floor(v * weights / 8);
        }
        double unit = switch (m.group(2)) {
            case "KiB" -> 1024.0;
            case "MiB" -> 1024.0 * 1024;
            case "GiB" -> 1024.0 * 1024 * 1024;
            default -> 1.0;
        };
        return (long) Math.floor(v * unit);
    }
}
