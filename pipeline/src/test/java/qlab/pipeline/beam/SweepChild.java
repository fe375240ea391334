package qlab.pipeline.beam;

import org.apache.beam.runners.direct.DirectOptions;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import qlab.engine.QlabException;
import qlab.pipeline.FakeEvaluator;

/** A sweep with the fake evaluator in a JVM of its own, for tests that kill it: SWEEP_FILE OUT. */
public final class SweepChild {

    private SweepChild() {}

    public static void main(String[] args) {
        SweepOptions o = PipelineOptionsFactory.as(SweepOptions.class);
        o.setSweepFile(args[0]);
        o.setOut(args[1]);
        o.setReport(false);
        o.as(DirectOptions.class).setTargetParallelism(2);
        try {
            SweepSummary s = SweepPipeline.run(o, new FakeEvaluator.Factory("child"));
            System.out.println("ok " + s.ok());
        } catch (QlabException e) {
            System.err.println("qlab: " + e.getMessage());
            System.exit(2);
        }
    }
}
