package qlab.pipeline.matrix;

import java.io.Serializable;
import java.util.List;
import java.util.Map;
import java.util.Set;
import qlab.pipeline.CalibrationSet;
import qlab.pipeline.EvalSettings;
import qlab.pipeline.KvCacheChoice;
import qlab.pipeline.ModelSpec;
import qlab.pipeline.ThroughputSettings;

/**
 * A parsed sweep file: the model, the axes whose cross product is the sweep, and the measurement
 * settings every config shares. {@link MatrixExpansion#expand} turns it into configs.
 *
 * @param imatrices calibration set names, or {@link #NO_IMATRIX} for a config without an importance matrix
 * @param activations the activation paths to measure each checkpoint with ({@code [f32]} when the file names none)
 * @param kvCaches the KV cache types to measure each checkpoint with ({@code [f32]} when the file names none)
 * @param throughput null unless throughput or batch is measured
 * @param sensitivity null for an ordinary sweep; for {@code mode: sensitivity}, how the formats axis
 *                    (then the candidate formats) is applied to one tensor group at a time
 */
public record SweepMatrix(String name, String sourceFile, ModelSpec model, List<FormatChoice> formats,
                          List<Integer> groupSizes, List<Integer> threads, List<String> imatrices,
                          List<Activations> activations, List<KvCacheChoice> kvCaches,
                          Map<String, CalibrationSet> calibration, EvalSettings eval,
                          ThroughputSettings throughput, Set<Measurement> measurements, Sensitivity sensitivity)
        implements Serializable {

    public static final String NO_IMATRIX = "none";
}
