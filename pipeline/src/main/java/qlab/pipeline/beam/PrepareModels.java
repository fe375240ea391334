package qlab.pipeline.beam;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.metrics.Metrics;
import org.apache.beam.sdk.transforms.GroupByKey;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.WithKeys;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.TypeDescriptors;
import qlab.pipeline.EvaluatorFactory;
import qlab.pipeline.ModelSpec;
import qlab.pipeline.PreparedModel;
import qlab.pipeline.results.ConfigOutcome;
import qlab.pipeline.results.Journal;

/**
 * Loads or generates each distinct model once, and drops the configs that the results directory
 * already has an ok row for with this very model (the resume rule: same config id, same model hash).
 */
public final class PrepareModels extends PTransform<PCollection<ConfigOutcome>, PCollection<ConfigOutcome>> {

    private final EvaluatorFactory factory;
    private final String cacheDir;
    private final Journal journal;
    private final HashSet<String> okBefore;

    public PrepareModels(EvaluatorFactory factory, String cacheDir, Journal journal, Set<String> okBefore) {
        this.factory = factory;
        this.cacheDir = cacheDir;
        this.journal = journal;
        this.okBefore = new HashSet<>(okBefore);
    }

    @Override
    public PCollection<ConfigOutcome> expand(PCollection<ConfigOutcome> input) {
        return input
                .apply("KeyByModel", WithKeys.of(PrepareModels::modelKey).withKeyType(TypeDescriptors.strings()))
                .setCoder(Outcomes.KEYED)
                .apply("GroupByModel", GroupByKey.create())
                .apply("Prepare", ParDo.of(new PrepareFn(new EvaluatorHandle(factory, cacheDir), journal, okBefore)))
                .setCoder(Outcomes.CODER);
    }

    static String modelKey(ConfigOutcome o) {
        return o.pending() ? o.config().model().key() : Outcomes.PASS;
    }

    static final class PrepareFn extends EvaluatorFn {
        private final Counter prepared = Metrics.counter(Outcomes.NAMESPACE, Outcomes.MODELS);
        private final Counter resumed = Metrics.counter(Outcomes.NAMESPACE, Outcomes.RESUMED);
        private final HashSet<String> okBefore;

        PrepareFn(EvaluatorHandle evaluator, Journal journal, HashSet<String> okBefore) {
            super(evaluator, journal);
            this.okBefore = okBefore;
        }

        @Override
        void processGroup(String key, List<ConfigOutcome> configs, OutputReceiver<ConfigOutcome> out) throws Exception {
            ModelSpec spec = configs.get(0).config().model();
            PreparedModel model;
            long start = System.nanoTime();
            try {
                model = evaluator.get().prepareModel(spec);
                if (model == null || model.modelHash() == null || model.modelId() == null) {
                    throw new IllegalStateException("the evaluator returned no model id or hash");
                }
            } catch (Throwable t) {
                if (!Outcomes.isConfigFailure(t)) {
                    throw t;
                }
                Outcomes.groupFailed("prepare");
                String reason = Outcomes.reason("prepare model " + spec.key(), t);
                configs.forEach(o -> out.output(Outcomes.finish(o, ConfigOutcome.Status.FAILED, reason, journal)));
                return;
            } finally {
                Outcomes.work("prepare", start);
            }
            prepared.inc();
            for (ConfigOutcome o : configs) {
                if (okBefore.contains(ConfigOutcome.resumeKey(o.config().configId(), model.modelHash()))) {
                    resumed.inc();
                } else {
                    out.output(o.withModel(model));
                }
            }
        }
    }
}
