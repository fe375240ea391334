package qlab.pipeline.beam;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.metrics.Metrics;
import org.apache.beam.sdk.transforms.GroupByKey;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.WithKeys;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.TypeDescriptors;
import qlab.pipeline.EvalSettings;
import qlab.pipeline.EvaluatorFactory;
import qlab.pipeline.QualityMeasurement;
import qlab.pipeline.matrix.ConfigId;
import qlab.pipeline.matrix.Measurement;
import qlab.pipeline.results.ConfigOutcome;
import qlab.pipeline.results.Journal;
import qlab.engine.bench.MachineInfo;

/**
 * Perplexity and KL divergence of each distinct (checkpoint, activations, evaluation settings), once.
 * Quality is deterministic, so unlike throughput these run in parallel on as many workers as the
 * runner gives; configs that differ only in threads share one measurement. A config whose only
 * measurement is quality is finished here.
 *
 * <p>A measurement is kept in the cache under its key (checkpoint content key + evaluation settings,
 * + int8 for int8 activations: the key of an f32 measurement is the one it had before the axis existed)
 * as soon as it is made: a sweep killed while timing other configs, or re-run after a failure, does
 * not evaluate the same checkpoint again.
 */
public final class EvaluateQuality extends PTransform<PCollection<ConfigOutcome>, PCollection<ConfigOutcome>> {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final EvaluatorFactory factory;
    private final String cacheDir;
    private final Journal journal;

    public EvaluateQuality(EvaluatorFactory factory, String cacheDir, Journal journal) {
        this.factory = factory;
        this.cacheDir = cacheDir;
        this.journal = journal;
    }

    @Override
    public PCollection<ConfigOutcome> expand(PCollection<ConfigOutcome> input) {
        return input
                .apply("KeyByEvaluation", WithKeys.of(EvaluateQuality::qualityKey).withKeyType(TypeDescriptors.strings()))
                .setCoder(Outcomes.KEYED)
                .apply("GroupByEvaluation", GroupByKey.create())
                .apply("MeasureQuality", ParDo.of(new QualityFn(new EvaluatorHandle(factory, cacheDir), journal)))
                .setCoder(Outcomes.CODER);
    }

    static String qualityKey(ConfigOutcome o) {
        if (!o.pending() || !o.config().measures(Measurement.QUALITY)) {
            return Outcomes.PASS;
        }
        EvalSettings e = o.config().eval();
        // One checkpoint file, several measurements: int8 activations and KV cache types give other numbers.
        return o.checkpointKey() + "|" + ConfigId.hash(List.of(e.textHash(), e.ctx(), e.tokens()))
                + (o.config().activations().int8() ? "|int8" : "")
                + (o.config().kvCache().isF32() ? "" : "|kv=" + o.config().kvCache().yamlName());
    }

    static final class QualityFn extends EvaluatorFn {
        private final Counter measured = Metrics.counter(Outcomes.NAMESPACE, Outcomes.QUALITY);
        private final Counter fromCache = Metrics.counter(Outcomes.NAMESPACE, Outcomes.QUALITY_CACHED);

        QualityFn(EvaluatorHandle evaluator, Journal journal) {
            super(evaluator, journal);
        }

        @Override
        void processGroup(String key, List<ConfigOutcome> configs, OutputReceiver<ConfigOutcome> out) throws Exception {
            ConfigOutcome first = configs.get(0);
            Path cached = evaluator.cacheDir().resolve("quality").resolve(ConfigId.hash(key) + ".json");
            QualityMeasurement quality;
            long start = System.nanoTime();
            try {
                if (Files.exists(cached)) {
                    quality = JSON.readValue(cached.toFile(), QualityMeasurement.class);
                    fromCache.inc();
                } else {
                    quality = evaluator.get().measureQuality(first.model(), first.checkpoint(),
                            first.config().activations().int8(), first.config().kvCache(), first.config().eval());
                    if (quality == null) {
                        throw new IllegalStateException("the evaluator returned no quality measurement");
                    }
                    String bad = quality.firstNonFinite();
                    if (bad != null) {
                        throw new ArithmeticException(bad);
                    }
                    Files.createDirectories(cached.getParent());
                    Path tmp = Quantize.temporary(cached);
                    JSON.writeValue(tmp.toFile(), quality);
                    Quantize.moveIntoPlace(tmp, cached);
                }
            } catch (Throwable t) {
                if (!Outcomes.isConfigFailure(t)) {
                    throw t;
                }
                Outcomes.groupFailed("quality");
                String reason = Outcomes.reason("quality", t);
                configs.forEach(o -> out.output(Outcomes.finish(o, ConfigOutcome.Status.FAILED, reason, journal)));
                return;
            } finally {
                Outcomes.work("quality", start);
            }
            measured.inc();
            MachineInfo machine = MachineInfo.current();
            for (ConfigOutcome o : configs) {
                ConfigOutcome measuredOutcome = o.withQuality(quality, machine);
                out.output(o.config().measuresSpeed() ? measuredOutcome
                        : Outcomes.finish(measuredOutcome, ConfigOutcome.Status.OK, null, journal));
            }
        }
    }
}
