package qlab.pipeline.beam;

import org.apache.avro.generic.GenericRecord;
import org.apache.beam.sdk.extensions.avro.coders.AvroCoder;
import org.apache.beam.sdk.io.FileIO;
import org.apache.beam.sdk.io.WriteFilesResult;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.values.PCollection;
import qlab.pipeline.results.ConfigOutcome;
import qlab.pipeline.results.ResultSchema;
import qlab.pipeline.results.ResultStore;
import qlab.pipeline.results.RunInfo;

/**
 * The run's rows as Parquet in {@code OUT/runs/RUN_ID/}: one shard, {@code results.parquet}. The
 * shard count is fixed because runner-chosen sharding lost rows to colliding names on Spark; FileIO
 * writes into a temporary directory and renames, so the file appears whole or not at all.
 */
public final class WriteResults extends PTransform<PCollection<ConfigOutcome>, WriteFilesResult<Void>> {

    /** FileIO's temporary directory inside the run directory; empty once the write is committed. */
    public static final String TEMP_DIR = ".temp-beam";

    private final String runDir;
    private final RunInfo run;

    public WriteResults(String runDir, RunInfo run) {
        this.runDir = runDir;
        this.run = run;
    }

    @Override
    public WriteFilesResult<Void> expand(PCollection<ConfigOutcome> input) {
        return input
                .apply("ToRows", ParDo.of(new ToRecordFn(run)))
                .setCoder(AvroCoder.of(ResultSchema.CURRENT))
                .apply("Parquet", FileIO.<GenericRecord>write()
                        .via(new ParquetSink(ResultSchema.CURRENT))
                        .to(runDir)
                        .withTempDirectory(runDir + "/" + TEMP_DIR)
                        .withNumShards(1)
                        .withNaming((window, pane, numShards, shardIndex, compression) ->
                                numShards == 1 ? ResultStore.RESULT_FILE
                                        : String.format("results-%05d-of-%05d.parquet", shardIndex, numShards)));
    }

    static final class ToRecordFn extends DoFn<ConfigOutcome, GenericRecord> {
        private final RunInfo run;

        ToRecordFn(RunInfo run) {
            this.run = run;
        }

        @ProcessElement
        public void process(@Element ConfigOutcome o, OutputReceiver<GenericRecord> out) {
            out.output(ResultSchema.toRecord(o, run));
        }
    }
}
