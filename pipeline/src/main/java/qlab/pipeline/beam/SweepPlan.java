package qlab.pipeline.beam;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import qlab.pipeline.EvalSettings;
import qlab.pipeline.ThroughputSettings;
import qlab.pipeline.matrix.Measurement;
import qlab.pipeline.matrix.SweepConfig;

/**
 * How much work a run expects per stage, computed from the configs it will run with the same
 * sharing rules the stages use, so progress can say "quantize 3/8", and what one unit of each
 * stage costs, so the ETA weighs the stages still to come by their work rather than by their count.
 *
 * @param configs   rows the run will write (runnable configs not yet done, plus new skipped rows)
 * @param unitCosts the work of one unit of each stage (prepare, imatrix, quantize, quality,
 *                  throughput), in tokens run through the model ({@link #of} says how it is estimated)
 */
record SweepPlan(int configs, int models, int imatrices, int checkpoints, int qualities, int throughputs,
                 double[] unitCosts) {

    /**
     * Quantizing a model, in tokens through the same model: both scale with its parameters. On the
     * demo model (2 threads) q4_0 took 0.4 s and q4_k 0.6 s where 1024 tokens of ppl took 2 s.
     */
    static final double QUANTIZE_TOKENS = 250;

    /**
     * A decode step (one token per sequence, every weight streamed for it), in prefill tokens: Q4_0
     * on the qwen2.5-0.5b preset prefills 255.7 tok/s and decodes 63.2 at 2 threads (docs/kquants.md).
     */
    static final double DECODE_STEP_TOKENS = 4;

    /** Bytes of text per token, for texts not yet tokenized (BPE on English prose). */
    static final double BYTES_PER_TOKEN = 4;

    /** Every unit of every stage the same work: the ETA then weighs stages by their counts. */
    SweepPlan(int configs, int models, int imatrices, int checkpoints, int qualities, int throughputs) {
        this(configs, models, imatrices, checkpoints, qualities, throughputs, new double[] {1, 1, 1, 1, 1});
    }

    long[] expected() {
        return new long[] {models, imatrices, checkpoints, qualities, throughputs};
    }

    static SweepPlan of(List<SweepConfig> toRun, int newSkipped) {
        Set<String> models = new HashSet<>();
        Map<String, Double> imatrices = new HashMap<>();
        Set<String> checkpoints = new HashSet<>();
        Map<String, Double> qualities = new HashMap<>();
        Map<String, Double> baselines = new HashMap<>();
        int throughputs = 0;
        double throughputWork = 0;
        int cores = Runtime.getRuntime().availableProcessors();
        for (SweepConfig c : toRun) {
            models.add(c.model().key());
            String calibration = c.calibration() == null ? "" : c.calibration().contentHash();
            if (c.calibration() != null) {
                imatrices.put(c.model().key() + "|" + c.calibration().name() + "|" + calibration,
                        textTokens(c.calibration().files(), 0));
            }
            String checkpoint = c.model().key() + "|" + c.quant() + "|" + calibration;
            checkpoints.add(checkpoint);
            if (c.measures(Measurement.QUALITY)) {
                // As EvaluateQuality keys them: one checkpoint is evaluated once per activation path and KV cache.
                double tokens = evalTokens(c.eval());
                qualities.put(checkpoint + "|" + c.activations() + "|" + c.kvCache(), tokens);
                baselines.put(c.model().key(), tokens);
            }
            if (c.measuresSpeed()) {
                throughputs++;
                throughputWork += throughputTokens(c.throughput()) * Math.max(1.0, (double) cores / c.threads());
            }
        }
        // Preparing a model (loading or generating it) is not counted: the ETA shows none until a
        // stage with work has finished a unit. The reference's log-probs are computed by the first
        // evaluation of each model, so they are shared among the evaluations.
        double baselineWork = baselines.values().stream().mapToDouble(Double::doubleValue).sum();
        double[] costs = {
            0,
            mean(imatrices.values()),
            QUANTIZE_TOKENS,
            qualities.isEmpty() ? 0 : mean(qualities.values()) + baselineWork / qualities.size(),
            throughputs == 0 ? 0 : throughputWork / throughputs};
        return new SweepPlan(toRun.size() + newSkipped, models.size(), imatrices.size(), checkpoints.size(),
                qualities.size(), throughputs, costs);
    }

    /**
     * One throughput config: each repeat prefills the prompt and decodes single-stream, then per
     * batch size prefills half the prompt per sequence and decodes in batched steps.
     */
    static double throughputTokens(ThroughputSettings t) {
        double perRepeat = 0;
        if (t.singleStream()) {
            perRepeat += t.prefillTokens() + t.decodeTokens() * DECODE_STEP_TOKENS;
        }
        for (int b : t.batchSizes()) {
            perRepeat += b * Math.max(1, t.prefillTokens() / 2) + t.decodeTokens() * DECODE_STEP_TOKENS;
        }
        return Math.max(1, t.repeats()) * perRepeat;
    }

    private static double evalTokens(EvalSettings e) {
        return e.tokens() > 0 ? e.tokens() : textTokens(List.of(e.textPath()), 0);
    }

    private static double textTokens(List<String> files, double orElse) {
        double bytes = 0;
        for (String f : files) {
            try {
                bytes += Files.size(Path.of(f));
            } catch (IOException | RuntimeException e) {
                return orElse; // the stage reports the missing file; the estimate does without it
            }
        }
        return bytes / BYTES_PER_TOKEN;
    }

    private static double mean(java.util.Collection<Double> v) {
        return v.isEmpty() ? 0 : v.stream().mapToDouble(Double::doubleValue).sum() / v.size();
    }
}
