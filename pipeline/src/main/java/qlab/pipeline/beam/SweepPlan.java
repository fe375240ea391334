package qlab.pipeline.beam;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import qlab.pipeline.matrix.Measurement;
import qlab.pipeline.matrix.SweepConfig;

/**
 * How much work a run expects per stage, computed from the configs it will run with the same
 * sharing rules the stages use, so progress can say "quantize 3/8".
 *
 * @param configs   rows the run will write (runnable configs not yet done, plus new skipped rows)
 */
record SweepPlan(int configs, int models, int imatrices, int checkpoints, int qualities, int throughputs) {

    static SweepPlan of(List<SweepConfig> toRun, int newSkipped) {
        Set<String> models = new HashSet<>();
        Set<String> imatrices = new HashSet<>();
        Set<String> checkpoints = new HashSet<>();
        Set<String> qualities = new HashSet<>();
        int throughputs = 0;
        for (SweepConfig c : toRun) {
            models.add(c.model().key());
            String calibration = c.calibration() == null ? "" : c.calibration().contentHash();
            if (c.calibration() != null) {
                imatrices.add(c.model().key() + "|" + c.calibration().name() + "|" + calibration);
            }
            String checkpoint = c.model().key() + "|" + c.quant() + "|" + calibration;
            checkpoints.add(checkpoint);
            if (c.measures(Measurement.QUALITY)) {
                // As EvaluateQuality keys them: one checkpoint is evaluated once per activation path and KV cache.
                qualities.add(checkpoint + "|" + c.activations() + "|" + c.kvCache());
            }
            if (c.measuresSpeed()) {
                throughputs++;
            }
        }
        return new SweepPlan(toRun.size() + newSkipped, models.size(), imatrices.size(), checkpoints.size(),
                qualities.size(), throughputs);
    }
}
