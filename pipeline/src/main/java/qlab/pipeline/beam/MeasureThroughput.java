package qlab.pipeline.beam;

import java.util.Comparator;
import java.util.List;
import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.metrics.Metrics;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.GroupByKey;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.WithKeys;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.TypeDescriptors;
import qlab.pipeline.EvaluatorFactory;
import qlab.pipeline.ThroughputMeasurement;
import qlab.pipeline.ThroughputSettings;
import qlab.pipeline.results.ConfigOutcome;
import qlab.pipeline.results.Journal;
import qlab.engine.bench.MachineInfo;

/**
 * Prefill, decode and batched throughput, strictly one config at a time.
 *
 * <p>Timing is corrupted by anything running beside it, so this stage is serialized by design:
 * every config goes under one key, and one DoFn call walks the group sequentially (grouped by
 * checkpoint, then by thread count). On a batch runner a GroupByKey emits only after all its input
 * is complete, so no quantizing or quality work of this sweep is still running when the first timing
 * starts, and the single key keeps timings from overlapping each other on any runner and any
 * parallelism. The 1-minute load
 * average is recorded before and after each measurement, so outside load shows in the row.
 */
public final class MeasureThroughput extends PTransform<PCollection<ConfigOutcome>, PCollection<ConfigOutcome>> {

    static final String ONE_AT_A_TIME = "throughput";

    private final EvaluatorFactory factory;
    private final String cacheDir;
    private final Journal journal;

    public MeasureThroughput(EvaluatorFactory factory, String cacheDir, Journal journal) {
        this.factory = factory;
        this.cacheDir = cacheDir;
        this.journal = journal;
    }

    @Override
    public PCollection<ConfigOutcome> expand(PCollection<ConfigOutcome> input) {
        return input
                .apply("OneKey", WithKeys.<String, ConfigOutcome>of(ONE_AT_A_TIME).withKeyType(TypeDescriptors.strings()))
                .setCoder(Outcomes.KEYED)
                .apply("Serialize", GroupByKey.create())
                .apply("MeasureSequentially", ParDo.of(new ThroughputFn(new EvaluatorHandle(factory, cacheDir), journal)))
                .setCoder(Outcomes.CODER);
    }

    static final class ThroughputFn extends EvaluatorFn {
        private final Counter measured = Metrics.counter(Outcomes.NAMESPACE, Outcomes.THROUGHPUT);

        ThroughputFn(EvaluatorHandle evaluator, Journal journal) {
            super(evaluator, journal);
        }

        @Override
        void processGroup(String key, List<ConfigOutcome> configs, OutputReceiver<ConfigOutcome> out) throws Exception {
            // Configs of one checkpoint one after another (fewer model loads), f32 activations
            // before int8, then by threads.
            configs.sort(Comparator.comparing((ConfigOutcome o) -> String.valueOf(o.checkpointKey()))
                    .thenComparing(o -> o.config().activations())
                    .thenComparing(o -> o.config().kvCache().yamlName())
                    .thenComparingInt(o -> o.config().threads())
                    .thenComparing(o -> o.config().configId()));
            for (ConfigOutcome o : configs) {
                out.output(o.pending() && o.config().measuresSpeed() ? measure(o) : o);
            }
        }

        private ConfigOutcome measure(ConfigOutcome o) throws Exception {
            ThroughputSettings settings = o.config().throughput();
            long start = System.nanoTime();
            try {
                Double before = MachineInfo.loadAverage();
                ThroughputMeasurement t = evaluator.get().measureThroughput(o.model(), o.checkpoint(),
                        o.config().activations().int8(), o.config().kvCache(), o.config().threads(), settings);
                Double after = MachineInfo.loadAverage();
                if (t == null) {
                    throw new IllegalStateException("the evaluator returned no throughput measurement");
                }
                t = t.restrictTo(settings);
                String missing = missing(t, settings);
                if (missing != null) {
                    throw new IllegalStateException("the evaluator did not measure " + missing);
                }
                String bad = t.firstNonFinite();
                if (bad != null) {
                    throw new ArithmeticException(bad);
                }
                measured.inc();
                return Outcomes.finish(o.withThroughput(t, before, after, MachineInfo.current()),
                        ConfigOutcome.Status.OK, null, journal);
            } catch (Throwable t) {
                if (!Outcomes.isConfigFailure(t)) {
                    throw t;
                }
                return Outcomes.finish(o, ConfigOutcome.Status.FAILED, Outcomes.reason("throughput", t), journal);
            } finally {
                Outcomes.work("throughput", start);
            }
        }

        private static String missing(ThroughputMeasurement t, ThroughputSettings s) {
            if (s.singleStream() && (t.prefillTps() == null || t.decodeTpsMedian() == null
                    || t.decodeTpsMin() == null || t.decodeTpsMax() == null)) {
                return "single-stream prefill and decode";
            }
            if (s.batched() && (t.batchTps() == null || !t.batchTps().keySet().containsAll(s.batchSizes()))) {
                return "every batch size " + s.batchSizes();
            }
            return null;
        }
    }
}
