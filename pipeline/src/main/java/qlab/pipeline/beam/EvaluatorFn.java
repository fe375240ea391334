package qlab.pipeline.beam;

import java.util.ArrayList;
import java.util.List;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.values.KV;
import qlab.pipeline.results.ConfigOutcome;
import qlab.pipeline.results.Journal;

/**
 * A stage's work on one group of configs that share a content key, with an evaluator opened on the
 * worker at {@code @Setup}, released at the end of each bundle and closed at {@code @Teardown}. Groups under {@link Outcomes#PASS}
 * (configs already finished, or not needing this stage) pass through untouched.
 */
abstract class EvaluatorFn extends DoFn<KV<String, Iterable<ConfigOutcome>>, ConfigOutcome> {

    protected final EvaluatorHandle evaluator;
    protected final Journal journal;

    EvaluatorFn(EvaluatorHandle evaluator, Journal journal) {
        this.evaluator = evaluator;
        this.journal = journal;
    }

    @Setup
    public void setup() throws Exception {
        evaluator.open();
    }

    /** Models the evaluator cached for this bundle are dropped: DoFn instances outlive their stage. */
    @FinishBundle
    public void finishBundle() {
        evaluator.release();
    }

    @Teardown
    public void teardown() throws Exception {
        evaluator.close();
    }

    @ProcessElement
    public void process(@Element KV<String, Iterable<ConfigOutcome>> group, OutputReceiver<ConfigOutcome> out)
            throws Exception {
        List<ConfigOutcome> configs = new ArrayList<>();
        group.getValue().forEach(configs::add);
        if (Outcomes.PASS.equals(group.getKey())) {
            configs.forEach(out::output);
            return;
        }
        processGroup(group.getKey(), configs, out);
    }

    /** The stage's work on a group of pending configs sharing {@code key}. */
    abstract void processGroup(String key, List<ConfigOutcome> configs, OutputReceiver<ConfigOutcome> out) throws Exception;
}
