package qlab.pipeline.results;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.apache.avro.generic.GenericRecord;
import qlab.engine.QlabException;
import qlab.engine.util.IoErrors;

/**
 * A results directory ({@code --out}). Layout:
 * <pre>
 *   runs/RUN_ID/results.parquet   one file per run, never rewritten
 *   .journal/RUN_ID/*.parquet     rows of a run in progress (or of a killed one)
 *   .cache/                       imatrices and quantized checkpoints by content key
 *   .lock                         held while a sweep writes here
 *   report.html, charts/          regenerated from all runs after each sweep
 * </pre>
 */
public final class ResultStore {

    public static final String RESULT_FILE = "results.parquet";

    private final Path root;

    public ResultStore(Path root) {
        this.root = root.toAbsolutePath().normalize();
    }

    public Path root() {
        return root;
    }

    public Path runDir(String runId) {
        return root.resolve("runs").resolve(runId);
    }

    public Path journalDir(String runId) {
        return root.resolve(".journal").resolve(runId);
    }

    public Path cacheDir() {
        return root.resolve(".cache");
    }

    /**
     * Takes the directory for one sweep; a second sweep into the same directory fails at once
     * rather than mixing its journal with this one's.
     */
    public Lock lock() {
        try {
            Files.createDirectories(root);
            FileChannel channel = FileChannel.open(root.resolve(".lock"), StandardOpenOption.CREATE,
                    StandardOpenOption.WRITE);
            FileLock lock;
            try {
                lock = channel.tryLock();
            } catch (OverlappingFileLockException heldInThisProcess) {
                lock = null;
            }
            if (lock == null) {
                channel.close();
                throw new QlabException(root + ": another sweep is writing to this directory");
            }
            return new Lock(channel);
        } catch (IOException e) {
            throw new QlabException(root + ": cannot lock: " + IoErrors.why(e));
        }
    }

    /** The lock on a results directory; closing the channel releases it. */
    public record Lock(FileChannel channel) implements AutoCloseable {
        @Override
        public void close() {
            try {
                channel.close();
            } catch (IOException e) {
                throw new QlabException("cannot release the results directory lock: " + e.getMessage());
            }
        }
    }

    /**
     * Turns the journal of every run that did not finish into that run's result file, and removes
     * journals whose run did finish (killed between writing its file and deleting its journal).
     *
     * @return the ids of the runs whose rows were recovered
     */
    public List<String> recoverInterrupted() {
        Path journals = root.resolve(".journal");
        List<String> recovered = new ArrayList<>();
        if (!Files.isDirectory(journals)) {
            return recovered;
        }
        try (Stream<Path> runs = Files.list(journals)) {
            for (Path dir : runs.filter(Files::isDirectory).sorted().toList()) {
                String runId = dir.getFileName().toString();
                Path target = runDir(runId).resolve(RESULT_FILE);
                if (!Files.exists(target)) {
                    List<GenericRecord> rows = new ArrayList<>();
                    for (Path f : ResultFiles.find(List.of(dir))) {
                        // The journal may be of a run of an older qlab, with an older schema.
                        ResultFiles.readRecords(f).forEach(r -> rows.add(ResultSchema.upgrade(r)));
                    }
                    if (!rows.isEmpty()) {
                        ResultFiles.writeAtomically(target, rows);
                        recovered.add(runId);
                    }
                }
                deleteTree(dir);
            }
        } catch (IOException e) {
            throw new QlabException(journals + ": cannot recover: " + e.getMessage());
        }
        return recovered;
    }

    /** Every row of every run in this directory. */
    public List<ResultRow> rows() {
        return Files.isDirectory(root) ? ResultFiles.readRows(List.of(root)) : List.of();
    }

    /** Keys ({@link ConfigOutcome#resumeKey}) of the configs that already have an ok row here. */
    public static Set<String> okKeys(List<ResultRow> rows) {
        Set<String> keys = new HashSet<>();
        for (ResultRow r : rows) {
            if (r.ok()) {
                keys.add(ConfigOutcome.resumeKey(r.configId(), r.modelHash()));
            }
        }
        return keys;
    }

    /** Config ids that already have a skipped row here: skipping is decided by the config alone. */
    public static Set<String> skippedIds(List<ResultRow> rows) {
        Set<String> ids = new HashSet<>();
        for (ResultRow r : rows) {
            if ("skipped".equals(r.status())) {
                ids.add(r.configId());
            }
        }
        return ids;
    }

    public static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> all = Files.walk(dir)) {
            for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
