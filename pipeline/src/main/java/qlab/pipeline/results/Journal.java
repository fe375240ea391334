package qlab.pipeline.results;

import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;

/**
 * Each measured row of a run (ok or failed) written to its own small Parquet file the moment its
 * config is finished, so a killed sweep loses nothing that was done. Skipped rows are not journaled:
 * they cost nothing, and the next run adds them. The run's final file is written by the pipeline at the
 * end; the journal of a finished run is then deleted, and the journal of a killed run is turned into
 * that run's result file by {@link ResultStore#recoverInterrupted()} when the next sweep starts.
 */
public record Journal(String directory, RunInfo run) implements Serializable {

    public void record(ConfigOutcome outcome) {
        Path file = Path.of(directory, outcome.config().configId() + ".parquet");
        try {
            ResultFiles.writeAtomically(file, List.of(ResultSchema.toRecord(outcome, run)));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write journal entry " + file, e);
        }
    }
}
