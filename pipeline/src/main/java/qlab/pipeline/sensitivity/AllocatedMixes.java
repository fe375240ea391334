package qlab.pipeline.sensitivity;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import qlab.pipeline.matrix.SweepMatrix;
import qlab.pipeline.results.ResultFiles;
import qlab.pipeline.results.ResultRow;

/**
 * The mixes {@code qlab allocate} chose, kept in {@code RESULTS/tables/allocations.parquet} beside
 * the sensitivity table, so that once the sweep has measured them the report can put each mix's
 * predicted KL beside its measured one.
 *
 * @param budget      the budget as given ({@code 4.5} bits per weight, or {@code 350000B})
 * @param plan        the mix as a quantization plan ({@code quantize --format}, {@code export --format})
 * @param sweepMix    the mix in the sweep's formats axis form (group sizes from {@code group_sizes})
 * @param groupSize   that group size, or null
 * @param predictedKl the sum of the chosen formats' KL increases plus the reference's KL
 */
public record AllocatedMixes(List<Mix> mixes) {

    public record Mix(String budget, long budgetBytes, String plan, String sweepMix, Integer groupSize, long bytes,
                      double bitsPerWeight, double predictedKl) {
    }

    public static final String FILE = "allocations.parquet";

    static final Schema SCHEMA = SchemaBuilder.record("AllocatedMix").namespace("qlab.sensitivity").fields()
            .requiredString("budget")
            .requiredLong("budget_bytes")
            .requiredString("plan")
            .requiredString("sweep_mix")
            .optionalInt("group_size")
            .requiredLong("bytes")
            .requiredDouble("bits_per_weight")
            .requiredDouble("predicted_kl")
            .endRecord();

    public static Path file(Path results) {
        return results.resolve(ResultFiles.TABLES_DIR).resolve(FILE);
    }

    public void write(Path file) {
        List<GenericRecord> records = new ArrayList<>();
        for (Mix m : mixes) {
            GenericData.Record r = new GenericData.Record(SCHEMA);
            r.put("budget", m.budget());
            r.put("budget_bytes", m.budgetBytes());
            r.put("plan", m.plan());
            r.put("sweep_mix", m.sweepMix());
            r.put("group_size", m.groupSize());
            r.put("bytes", m.bytes());
            r.put("bits_per_weight", m.bitsPerWeight());
            r.put("predicted_kl", m.predictedKl());
            records.add(r);
        }
        try {
            ResultFiles.writeAtomically(file, SCHEMA, records);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        }
    }

    /** The allocations kept under any of these results directories (none: empty). */
    public static AllocatedMixes find(List<Path> roots) {
        List<Mix> mixes = new ArrayList<>();
        for (Path root : roots) {
            Path f = Files.isDirectory(root) ? file(root) : null;
            if (f == null || !Files.isRegularFile(f)) {
                continue;
            }
            for (GenericRecord r : ResultFiles.readRecords(f)) {
                mixes.add(new Mix(r.get("budget").toString(), (Long) r.get("budget_bytes"), r.get("plan").toString(),
                        r.get("sweep_mix").toString(), (Integer) r.get("group_size"), (Long) r.get("bytes"),
                        (Double) r.get("bits_per_weight"), (Double) r.get("predicted_kl")));
            }
        }
        return new AllocatedMixes(List.copyOf(mixes));
    }

    /** The allocated mix a result row measured, if it is one: same mix and group size. */
    public java.util.Optional<Mix> of(ResultRow r) {
        String mix = r.format() + r.tensorOverrides().entrySet().stream().map(e -> "+" + e.getKey() + "=" + e.getValue())
                .reduce("", String::concat);
        return mixes.stream().filter(m -> canonical(m.sweepMix()).equals(canonical(mix))
                && java.util.Objects.equals(m.groupSize(), r.groupSize())).findFirst();
    }

    /**
     * The row that measured a mix: among the ok rows with a KL of the same mix and group size, the one
     * with the fastest decode (quality does not depend on the thread count; speed does).
     */
    public java.util.Optional<ResultRow> measured(Mix m, List<ResultRow> rows) {
        return rows.stream().filter(r -> r.ok() && r.klMean() != null && of(r).equals(java.util.Optional.of(m)))
                .max(java.util.Comparator.comparingDouble(r -> r.decodeTpsMedian() == null ? -1 : r.decodeTpsMedian()));
    }

    /**
     * The config a mix has to beat: the lowest measured KL among the ok rows that are not allocated
     * mixes (uniform formats, llama.cpp's recipes, hand-written mixes), with the same activations and
     * no more bits per weight than the mix's measured row. Empty when nothing of that size was measured.
     */
    public java.util.Optional<ResultRow> bestRival(ResultRow measuredMix, List<ResultRow> rows) {
        return rows.stream()
                .filter(r -> r.ok() && r.klMean() != null && r.bitsPerWeight() != null && of(r).isEmpty())
                .filter(r -> r.activations().equals(measuredMix.activations()))
                .filter(r -> r.bitsPerWeight() <= measuredMix.bitsPerWeight() + 1e-9)
                .min(java.util.Comparator.comparingDouble(ResultRow::klMean));
    }

    /** A mix's overrides in sorted order (the result rows keep them sorted by selector). */
    private static String canonical(String mix) {
        String[] parts = mix.split("\\+");
        List<String> over = new ArrayList<>(List.of(parts).subList(1, parts.length));
        over.sort(null);
        return parts[0] + (over.isEmpty() ? "" : "+" + String.join("+", over));
    }

    /**
     * A sweep file that measures these mixes for real beside the sensitivity sweep's candidates as
     * uniform formats: same model, text, group size and threads, quality and throughput. Its name is
     * the sensitivity sweep's, so its rows land in the same results directory by default, where the
     * report finds the predictions.
     *
     * @param compare more formats or mixes to measure beside them (llama.cpp recipes, hand-written mixes)
     * @param dir     the directory the file will be written in (paths in it are relative to it)
     */
    public String verificationSweep(SweepMatrix sensitivity, List<String> compare, Path dir) {
        if (!sensitivity.imatrices().equals(List.of(SweepMatrix.NO_IMATRIX))) {
            throw new qlab.engine.QlabException(sensitivity.sourceFile() + ": imatrix: a verification sweep is written for "
                    + "sensitivity sweeps without an importance matrix; list the mixes of allocations.parquet in a sweep file by hand");
        }
        StringBuilder y = new StringBuilder();
        y.append("# Written by qlab allocate: the allocated mixes measured for real (quality and speed), beside the\n")
                .append("# uniform formats they were chosen from. The report shows each mix's predicted KL next to the measured.\n")
                .append("qlab_sweep: 1\nname: ").append(sensitivity.name()).append("\n\nmodel:\n");
        if (sensitivity.model().isPreset()) {
            y.append("  preset: ").append(sensitivity.model().preset()).append("\n  seed: ").append(sensitivity.model().seed()).append('\n');
        } else {
            y.append("  path: ").append(relative(dir, sensitivity.model().path())).append('\n');
        }
        y.append("\nformats:\n");
        java.util.Set<String> listed = new java.util.LinkedHashSet<>();
        sensitivity.formats().forEach(f -> listed.add(f.base()));
        listed.addAll(compare);
        listed.forEach(f -> y.append("  - ").append(f).append('\n'));
        for (Mix m : mixes) {
            if (!listed.add(m.sweepMix())) {
                y.append(String.format(Locale.ROOT, "  # budget %s: %s, listed above: predicted KL %.6f at %.3f bits/weight%n",
                        m.budget(), m.sweepMix(), m.predictedKl(), m.bitsPerWeight()));
                continue;
            }
            y.append("  - ").append(m.sweepMix()).append(String.format(Locale.ROOT,
                    "   # budget %s: predicted KL %.6f at %.3f bits/weight%n", m.budget(), m.predictedKl(), m.bitsPerWeight()));
        }
        y.append("group_sizes: ").append(sensitivity.groupSizes()).append('\n')
                .append("threads: ").append(sensitivity.threads()).append('\n')
                .append("activations: [").append(sensitivity.activations().getFirst().yamlName()).append("]\n")
                .append("\nevaluation:\n  text: ").append(relative(dir, sensitivity.eval().textPath()))
                .append("\n  ctx: ").append(sensitivity.eval().ctx())
                .append("\n  tokens: ").append(sensitivity.eval().tokens())
                .append("\n\nmeasurements: [quality, throughput]\n\nthroughput:\n  prefill_tokens: 32\n  decode_tokens: 16\n  repeats: 3\n");
        return y.toString();
    }

    private static String relative(Path dir, String path) {
        return dir.toAbsolutePath().normalize().relativize(Path.of(path).toAbsolutePath().normalize()).toString();
    }
}
