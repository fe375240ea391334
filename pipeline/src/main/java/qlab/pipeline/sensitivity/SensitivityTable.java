package qlab.pipeline.sensitivity;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import qlab.engine.QlabException;
import qlab.engine.model.ModelConfig;
import qlab.pipeline.QuantSpec;
import qlab.pipeline.engine.EngineEvaluator;
import qlab.pipeline.matrix.Sensitivity;
import qlab.pipeline.pareto.ResultHistory;
import qlab.pipeline.results.ResultFiles;
import qlab.pipeline.results.ResultRow;
import qlab.quant.checkpoint.QuantPlan;

/**
 * A sensitivity sweep's rows as one table, one entry per (group, format): what the group costs in
 * bytes in that format and how much KL it adds on its own. Derived from the sweep's result rows
 * and the model's shape whenever the sweep ends, and written to {@code RESULTS/tables/sensitivity.parquet};
 * {@code qlab allocate} reads it. The reference format of each group is an entry too (KL increase 0).
 *
 * @param group          the group's quantization-plan selector ({@code L3.q}, {@code emb})
 * @param format         the format the group was quantized in
 * @param groupSize      the sweep's group size where the format takes one, else null
 * @param weights        weights in the group
 * @param bytes          stored bytes of the group in this format
 * @param klMean         KL of the model with only this group in this format (mean over tokens, nats)
 * @param klSe           its standard error, or null
 * @param klIncrease     {@code klMean} minus the reference model's KL
 * @param configId       the sweep config that measured it (null for a reference entry)
 */
public record SensitivityTable(String reference, String modelHash, List<Entry> entries) {

    public record Entry(String group, String format, Integer groupSize, long weights, long bytes, double klMean,
                        Double klSe, double klIncrease, String configId) {

        /** The format as a plan writes it: {@code q4_0/g32}, or {@code q8_0} for the format's default group. */
        public String planFormat() {
            return groupSize == null || qlab.quant.Formats.whyUnsupported(format, groupSize).isPresent()
                    ? format : format + "/g" + groupSize;
        }
    }

    public static final String FILE = "sensitivity.parquet";

    static final Schema SCHEMA = SchemaBuilder.record("SensitivityEntry").namespace("qlab.sensitivity").fields()
            .requiredString("reference")
            .optionalString("model_hash")
            .requiredString("group")
            .requiredString("format")
            .optionalInt("group_size")
            .requiredLong("weights")
            .requiredLong("bytes")
            .requiredDouble("kl_mean")
            .optionalDouble("kl_se")
            .requiredDouble("kl_increase")
            .optionalString("config_id")
            .endRecord();

    /** Where a results directory keeps its sensitivity table. */
    public static Path file(Path results) {
        return results.resolve(ResultFiles.TABLES_DIR).resolve(FILE);
    }

    /**
     * The table of a sensitivity sweep from its ok rows ({@code configIds}: the sweep's configs, so
     * that rows of other sweeps in the same directory do not count). Empty when the reference row is
     * not measured yet: every increase is taken against it.
     */
    public static java.util.Optional<SensitivityTable> of(Sensitivity sensitivity, ModelConfig config,
                                                          List<ResultRow> rows, Set<String> configIds) {
        List<ResultRow> ok = ResultHistory.latest(rows).stream()
                .filter(r -> r.ok() && configIds.contains(r.configId()) && r.klMean() != null).toList();
        ResultRow ref = ok.stream().filter(r -> r.tensorOverrides().isEmpty()).findFirst().orElse(null);
        if (ref == null) {
            return java.util.Optional.empty();
        }
        Map<String, Sensitivity.TensorGroup> groups = new LinkedHashMap<>();
        sensitivity.groups(config).forEach(g -> groups.put(g.id(), g));
        List<Entry> entries = new ArrayList<>();
        for (Sensitivity.TensorGroup g : groups.values()) {
            entries.add(new Entry(g.id(), ref.format(), ref.groupSize(), g.weights(), bytes(ref, g, config), ref.klMean(),
                    ref.klSe(), 0.0, null));
        }
        for (ResultRow r : ok) {
            if (r.tensorOverrides().size() != 1) {
                continue;
            }
            Map.Entry<String, String> o = r.tensorOverrides().entrySet().iterator().next();
            Sensitivity.TensorGroup g = groups.get(o.getKey());
            if (g == null) {
                continue;
            }
            entries.add(new Entry(g.id(), o.getValue(), r.groupSize(), g.weights(), bytes(r, g, config), r.klMean(),
                    r.klSe(), r.klMean() - ref.klMean(), r.configId()));
        }
        return java.util.Optional.of(new SensitivityTable(sensitivity.reference(), ref.modelHash(), entries));
    }

    /** Stored bytes of the group's matrices under the row's plan. */
    private static long bytes(ResultRow r, Sensitivity.TensorGroup g, ModelConfig config) {
        QuantPlan plan = EngineEvaluator.plan(new QuantSpec(r.format(), r.groupSize(), r.tensorOverrides()));
        Set<String> tensors = Set.copyOf(g.tensors());
        return plan.explain(config, r.imatrix() != null).stream().filter(a -> tensors.contains(a.tensor()))
                .mapToLong(QuantPlan.Assignment::bytes).sum();
    }

    public void write(Path file) {
        List<GenericRecord> records = new ArrayList<>();
        for (Entry e : entries) {
            GenericData.Record rec = new GenericData.Record(SCHEMA);
            rec.put("reference", reference);
            rec.put("model_hash", modelHash);
            rec.put("group", e.group());
            rec.put("format", e.format());
            rec.put("group_size", e.groupSize());
            rec.put("weights", e.weights());
            rec.put("bytes", e.bytes());
            rec.put("kl_mean", e.klMean());
            rec.put("kl_se", e.klSe());
            rec.put("kl_increase", e.klIncrease());
            rec.put("config_id", e.configId());
            records.add(rec);
        }
        try {
            ResultFiles.writeAtomically(file, SCHEMA, records);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        }
    }

    /**
     * Config ids of the single-group rows of the sensitivity sweeps under these results directories:
     * views of a directory's quantizations (frontiers, charts) leave them out.
     */
    public static Set<String> probeIds(List<Path> roots) {
        Set<String> ids = new java.util.HashSet<>();
        for (Path root : roots) {
            if (Files.isDirectory(root) && Files.isRegularFile(file(root))) {
                read(root).entries().stream().map(Entry::configId).filter(java.util.Objects::nonNull).forEach(ids::add);
            }
        }
        return ids;
    }

    /** The table in a file, or in a results directory's {@code tables/} (a user error naming the path when absent). */
    public static SensitivityTable read(Path path) {
        Path file = Files.isDirectory(path) ? file(path) : path;
        if (!Files.isRegularFile(file)) {
            throw new QlabException(path + ": no sensitivity table (" + file + "); run a sweep with mode: sensitivity into it first");
        }
        List<Entry> entries = new ArrayList<>();
        String reference = null;
        String modelHash = null;
        for (GenericRecord r : ResultFiles.readRecords(file)) {
            if (r.getSchema().getField("kl_increase") == null || r.getSchema().getField("group") == null) {
                throw new QlabException(file + ": not a sensitivity table (no kl_increase or group column)");
            }
            reference = r.get("reference").toString();
            modelHash = r.get("model_hash") == null ? null : r.get("model_hash").toString();
            entries.add(new Entry(r.get("group").toString(), r.get("format").toString(),
                    (Integer) r.get("group_size"), (Long) r.get("weights"), (Long) r.get("bytes"),
                    (Double) r.get("kl_mean"), (Double) r.get("kl_se"), (Double) r.get("kl_increase"),
                    r.get("config_id") == null ? null : r.get("config_id").toString()));
        }
        if (entries.isEmpty()) {
            throw new QlabException(file + ": the sensitivity table is empty");
        }
        return new SensitivityTable(reference, modelHash, List.copyOf(entries));
    }
}
