package qlab.pipeline.matrix;

import java.io.Serializable;
import java.util.List;
import qlab.pipeline.CalibrationSet;
import qlab.pipeline.EvalSettings;
import qlab.pipeline.KvCacheChoice;
import qlab.pipeline.ModelSpec;
import qlab.pipeline.QuantSpec;
import qlab.pipeline.ThroughputSettings;

/**
 * One point of the expanded matrix: everything that determines its result row.
 *
 * @param configId     stable hash of the canonical form of all the other fields (see {@link ConfigId})
 * @param calibration  the calibration set of the importance matrix, or null for none
 * @param activations  the activation path the checkpoint is measured with (always f32 for a mix of float formats)
 * @param kvCache      the KV cache types the checkpoint is measured with
 * @param measurements what to measure, in enum order
 * @param skipReason   why this combination cannot exist, or null when it can be run
 */
public record SweepConfig(String configId, ModelSpec model, QuantSpec quant, CalibrationSet calibration,
                          Activations activations, KvCacheChoice kvCache, int threads, EvalSettings eval, ThroughputSettings throughput,
                          List<Measurement> measurements, String skipReason) implements Serializable {

    public SweepConfig {
        measurements = List.copyOf(measurements);
    }

    public boolean skipped() {
        return skipReason != null;
    }

    public boolean measures(Measurement m) {
        return measurements.contains(m);
    }

    public boolean measuresSpeed() {
        return measurements.stream().anyMatch(Measurement::timed);
    }

    /** The calibration set name as the {@code imatrix} column shows it, or null for none. */
    public String imatrixName() {
        return calibration == null ? null : calibration.name();
    }

    /**
     * A short human label: {@code q4_8/128+attn=q8_0 imx=wiki t2}, with {@code  int8} after it for int8
     * activations and {@code  kv=q8_0} for a KV cache other than f32.
     */
    public String label() {
        StringBuilder sb = new StringBuilder(quant.format());
        if (quant.groupSize() != null) {
            sb.append('/').append(quant.groupSize());
        }
        quant.overrides().forEach((k, v) -> sb.append('+').append(k).append('=').append(v));
        if (calibration != null) {
            sb.append(" imx=").append(calibration.name());
        }
        sb.append(" t").append(threads);
        if (activations.int8()) {
            sb.append(" int8");
        }
        if (!kvCache.isF32()) {
            sb.append(" kv=").append(kvCache.yamlName());
        }
        return sb.toString();
    }
}
