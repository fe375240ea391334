package qlab.pipeline.beam;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.metrics.Metrics;
import org.apache.beam.sdk.transforms.GroupByKey;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.WithKeys;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.TypeDescriptors;
import qlab.pipeline.CalibrationSet;
import qlab.pipeline.EvaluatorFactory;
import qlab.pipeline.QuantizedCheckpoint;
import qlab.pipeline.matrix.ConfigId;
import qlab.pipeline.results.ConfigOutcome;
import qlab.pipeline.results.Journal;
import qlab.pipeline.results.ResultStore;

/**
 * Builds each distinct importance matrix and each distinct quantized checkpoint once. Both are
 * cached on disk under a content key of their inputs (model hash, quantization, calibration
 * contents), so configs that differ only in threads or measurements share a checkpoint, and a
 * resumed or repeated sweep reuses what an earlier one built. A cache entry is complete once its
 * metadata file exists; both are renamed into place only after being fully written, and the entry
 * is used only while its file has the size and SHA-256 the metadata records ({@link CacheEntry}).
 */
public final class Quantize extends PTransform<PCollection<ConfigOutcome>, PCollection<ConfigOutcome>> {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final EvaluatorFactory factory;
    private final String cacheDir;
    private final Journal journal;

    public Quantize(EvaluatorFactory factory, String cacheDir, Journal journal) {
        this.factory = factory;
        this.cacheDir = cacheDir;
        this.journal = journal;
    }

    @Override
    public PCollection<ConfigOutcome> expand(PCollection<ConfigOutcome> input) {
        return input
                .apply("KeyByImportanceMatrix", WithKeys.of(Quantize::importanceKey).withKeyType(TypeDescriptors.strings()))
                .setCoder(Outcomes.KEYED)
                .apply("GroupByImportanceMatrix", GroupByKey.create())
                .apply("ComputeImportanceMatrices",
                        ParDo.of(new ImportanceFn(new EvaluatorHandle(factory, cacheDir), journal)))
                .setCoder(Outcomes.CODER)
                .apply("KeyByCheckpoint", WithKeys.of(Quantize::checkpointKey).withKeyType(TypeDescriptors.strings()))
                .setCoder(Outcomes.KEYED)
                .apply("GroupByCheckpoint", GroupByKey.create())
                .apply("BuildCheckpoints", ParDo.of(new CheckpointFn(new EvaluatorHandle(factory, cacheDir), journal)))
                .setCoder(Outcomes.CODER);
    }

    static String importanceKey(ConfigOutcome o) {
        CalibrationSet c = o.config().calibration();
        if (!o.pending() || c == null) {
            return Outcomes.PASS;
        }
        return ConfigId.hash(List.of(o.model().modelHash(), c.name(), c.contentHash()));
    }

    /** Content key of the checkpoint a pending config needs; travels with the outcome from here on. */
    static String checkpointKey(ConfigOutcome o) {
        if (!o.pending()) {
            return Outcomes.PASS;
        }
        Map<String, Object> inputs = new LinkedHashMap<>();
        inputs.put("model", o.model().modelHash());
        inputs.put("format", o.config().quant().format());
        inputs.put("group_size", o.config().quant().groupSize());
        inputs.put("overrides", o.config().quant().overrides());
        CalibrationSet c = o.config().calibration();
        inputs.put("imatrix", c == null ? null : c.contentHash());
        return ConfigId.hash(inputs);
    }

    static final class ImportanceFn extends EvaluatorFn {
        private final Counter ready = Metrics.counter(Outcomes.NAMESPACE, Outcomes.IMATRICES);

        ImportanceFn(EvaluatorHandle evaluator, Journal journal) {
            super(evaluator, journal);
        }

        @Override
        void processGroup(String key, List<ConfigOutcome> configs, OutputReceiver<ConfigOutcome> out) throws Exception {
            ConfigOutcome first = configs.get(0);
            Path target = evaluator.cacheDir().resolve("imatrix").resolve(key + ".imatrix");
            Path meta = target.resolveSibling(key + ".imatrix.json");
            long start = System.nanoTime();
            try {
                if (!usable(target, meta)) {
                    Files.createDirectories(target.getParent());
                    Files.deleteIfExists(meta);
                    Path tmp = temporary(target);
                    evaluator.get().computeImportance(first.model(), first.config().calibration(), tmp);
                    if (!Files.exists(tmp)) {
                        throw new IllegalStateException("the evaluator wrote no importance matrix");
                    }
                    Map<String, Object> recorded = CacheEntry.describe(tmp);
                    moveIntoPlace(tmp, target);
                    writeMeta(meta, recorded);
                }
            } catch (Throwable t) {
                if (!Outcomes.isConfigFailure(t)) {
                    throw t;
                }
                Outcomes.groupFailed("imatrix");
                String reason = Outcomes.reason("importance matrix " + first.config().calibration().name(), t);
                configs.forEach(o -> out.output(Outcomes.finish(o, ConfigOutcome.Status.FAILED, reason, journal)));
                return;
            } finally {
                Outcomes.work("imatrix", start);
            }
            ready.inc();
            configs.forEach(o -> out.output(o.withImportance(target.toString())));
        }
    }

    static final class CheckpointFn extends EvaluatorFn {
        private final Counter ready = Metrics.counter(Outcomes.NAMESPACE, Outcomes.CHECKPOINTS);
        private final Counter cached = Metrics.counter(Outcomes.NAMESPACE, Outcomes.CHECKPOINTS_CACHED);

        CheckpointFn(EvaluatorHandle evaluator, Journal journal) {
            super(evaluator, journal);
        }

        @Override
        void processGroup(String key, List<ConfigOutcome> configs, OutputReceiver<ConfigOutcome> out) throws Exception {
            ConfigOutcome first = configs.get(0);
            Path dir = evaluator.cacheDir().resolve("checkpoints");
            Path checkpointPath = dir.resolve(key + ".ckpt");
            Path meta = dir.resolve(key + ".json");
            QuantizedCheckpoint checkpoint;
            long start = System.nanoTime();
            try {
                if (usable(checkpointPath, meta)) {
                    JsonNode m = JSON.readTree(meta.toFile());
                    checkpoint = new QuantizedCheckpoint(checkpointPath.toString(), m.get("file_bytes").asLong(),
                            m.get("bits_per_weight").asDouble());
                    cached.inc();
                } else {
                    Files.createDirectories(dir);
                    Files.deleteIfExists(meta);
                    Path tmp = temporary(checkpointPath);
                    String importance = first.importancePath();
                    QuantizedCheckpoint built = evaluator.get().quantize(first.model(), first.config().quant(),
                            importance == null ? null : Path.of(importance), tmp);
                    if (built == null || !Files.exists(tmp)) {
                        throw new IllegalStateException("the evaluator wrote no checkpoint");
                    }
                    if (!Double.isFinite(built.bitsPerWeight()) || built.bitsPerWeight() <= 0) {
                        throw new IllegalStateException("bits_per_weight is " + built.bitsPerWeight());
                    }
                    Map<String, Object> recorded = new LinkedHashMap<>();
                    recorded.put("file_bytes", built.fileBytes());
                    recorded.put("bits_per_weight", built.bitsPerWeight());
                    recorded.putAll(CacheEntry.describe(tmp));
                    moveIntoPlace(tmp, checkpointPath);
                    writeMeta(meta, recorded);
                    checkpoint = new QuantizedCheckpoint(checkpointPath.toString(), built.fileBytes(),
                            built.bitsPerWeight());
                }
            } catch (Throwable t) {
                if (!Outcomes.isConfigFailure(t)) {
                    throw t;
                }
                Outcomes.groupFailed("quantize");
                String reason = Outcomes.reason("quantize " + first.config().quant().mixName(), t);
                configs.forEach(o -> out.output(Outcomes.finish(o, ConfigOutcome.Status.FAILED, reason, journal)));
                return;
            } finally {
                Outcomes.work("quantize", start);
            }
            ready.inc();
            QuantizedCheckpoint c = checkpoint;
            configs.forEach(o -> out.output(o.withCheckpoint(key, c)));
        }
    }

    /**
     * Whether a cache entry can be used: its metadata (written last) exists and the file still has
     * the size and hash it records. A damaged entry is said once on stderr and rebuilt.
     */
    static boolean usable(Path file, Path meta) throws IOException {
        if (!Files.exists(meta)) {
            return false;
        }
        JsonNode m;
        try {
            m = JSON.readTree(meta.toFile());
        } catch (IOException unreadable) {
            m = null;
        }
        if (m != null && CacheEntry.intact(file, m)) {
            return true;
        }
        System.err.println("qlab: cache entry " + file + " does not match its size and hash in " + meta.getFileName()
                + " (cut short or changed); building it again");
        return false;
    }

    /** The metadata of a cache entry, renamed into place after its file: an entry without it is incomplete. */
    static void writeMeta(Path meta, Map<String, Object> recorded) throws IOException {
        Path metaTmp = temporary(meta);
        JSON.writeValue(metaTmp.toFile(), recorded);
        moveIntoPlace(metaTmp, meta);
    }

    /** A fresh name beside {@code target}, hidden, unique to this attempt. */
    static Path temporary(Path target) throws IOException {
        Path tmp = target.resolveSibling("." + target.getFileName() + "." + UUID.randomUUID() + ".tmp");
        ResultStore.deleteTree(tmp);
        return tmp;
    }

    static void moveIntoPlace(Path tmp, Path target) throws IOException {
        ResultStore.deleteTree(target);
        try {
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(tmp, target);
        }
    }
}
