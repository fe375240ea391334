package qlab.pipeline.beam;

import java.util.HashSet;
import java.util.Set;
import org.apache.beam.sdk.coders.SerializableCoder;
import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.metrics.Metrics;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.values.PBegin;
import org.apache.beam.sdk.values.PCollection;
import qlab.pipeline.matrix.MatrixExpansion;
import qlab.pipeline.matrix.SweepConfig;
import qlab.pipeline.matrix.SweepMatrix;
import qlab.pipeline.results.ConfigOutcome;
import qlab.pipeline.results.Journal;

/**
 * The sweep file's matrix as one outcome per distinct config: pending for the runnable ones,
 * skipped with its reason for a combination that cannot exist (unless the results directory already
 * has that skipped row).
 */
public final class ExpandMatrix extends PTransform<PBegin, PCollection<ConfigOutcome>> {

    private final SweepMatrix matrix;
    private final HashSet<String> skippedBefore;
    private final Journal journal;

    public ExpandMatrix(SweepMatrix matrix, Set<String> skippedBefore, Journal journal) {
        this.matrix = matrix;
        this.skippedBefore = new HashSet<>(skippedBefore);
        this.journal = journal;
    }

    @Override
    public PCollection<ConfigOutcome> expand(PBegin input) {
        return input
                .apply("Matrix", Create.of(matrix).withCoder(SerializableCoder.of(SweepMatrix.class)))
                .apply("CrossProduct", ParDo.of(new ExpandFn(skippedBefore, journal)))
                .setCoder(Outcomes.CODER);
    }

    static final class ExpandFn extends DoFn<SweepMatrix, ConfigOutcome> {
        private final Counter resumed = Metrics.counter(Outcomes.NAMESPACE, Outcomes.RESUMED);
        private final HashSet<String> skippedBefore;
        private final Journal journal;

        ExpandFn(HashSet<String> skippedBefore, Journal journal) {
            this.skippedBefore = skippedBefore;
            this.journal = journal;
        }

        @ProcessElement
        public void process(@Element SweepMatrix m, OutputReceiver<ConfigOutcome> out) {
            for (SweepConfig c : MatrixExpansion.expand(m).configs()) {
                ConfigOutcome o = ConfigOutcome.start(c);
                if (!c.skipped()) {
                    out.output(o);
                } else if (skippedBefore.contains(c.configId())) {
                    resumed.inc();
                } else {
                    out.output(Outcomes.finish(o, ConfigOutcome.Status.SKIPPED, c.skipReason(), journal));
                }
            }
        }
    }
}
