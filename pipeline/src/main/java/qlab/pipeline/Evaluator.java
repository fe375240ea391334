package qlab.pipeline;

import java.io.IOException;
import java.nio.file.Path;

/**
 * The work a sweep worker does on models: everything the pipeline needs from the engine, the
 * quantizers and the measurements, and nothing more. The pipeline decides what runs when, caches
 * results by content keys and turns failures into rows; an Evaluator only computes.
 *
 * <p>An instance is made per worker by an {@link EvaluatorFactory} and is used by one thread at a
 * time. Methods may throw anything: an exception, an {@link OutOfMemoryError} or a non-finite
 * measurement turns the config into a {@code failed} row and the sweep goes on.
 */
public interface Evaluator extends AutoCloseable {

    /** Loads a Hugging Face directory or generates a synthetic preset from its seed. */
    PreparedModel prepareModel(ModelSpec model) throws Exception;

    /**
     * Computes the importance matrix of {@code model} over the calibration texts and writes it to
     * {@code target} (a path the pipeline chose in its cache; it renames the file into place after).
     */
    void computeImportance(PreparedModel model, CalibrationSet calibration, Path target) throws Exception;

    /**
     * Quantizes {@code model} as {@code spec} says and writes the checkpoint to {@code target}.
     *
     * @param importance the importance matrix file from {@link #computeImportance}, or null for none
     */
    QuantizedCheckpoint quantize(PreparedModel model, QuantSpec spec, Path importance, Path target) throws Exception;

    /**
     * Perplexity and KL divergence of the checkpoint against the model's fp32 reference.
     *
     * @param int8Activations load the checkpoint so that its integer-format matrices quantize their
     *                        activations to int8 (false: f32 activations). The same checkpoint file is
     *                        measured both ways, so a model loaded one way must never serve the other.
     * @param kvCache         the KV cache types the checkpoint runs with; the reference is always f32
     */
    QualityMeasurement measureQuality(PreparedModel model, QuantizedCheckpoint checkpoint, boolean int8Activations,
                                      KvCacheChoice kvCache, EvalSettings eval) throws Exception;

    /**
     * Prefill, decode and batched throughput of the checkpoint with {@code threads} threads. The
     * pipeline calls this for one config at a time on a machine: nothing else of the sweep runs beside it.
     *
     * @param int8Activations as for {@link #measureQuality}
     * @param kvCache         as for {@link #measureQuality}
     */
    ThroughputMeasurement measureThroughput(PreparedModel model, QuantizedCheckpoint checkpoint,
                                            boolean int8Activations, KvCacheChoice kvCache, int threads,
                                            ThroughputSettings settings)
            throws Exception;

    /**
     * Lets go of what the evaluator keeps between calls (a loaded fp32 model, ~2 GB at the 0.5B
     * shapes). The pipeline calls it when a worker finishes a bundle: every stage's DoFn instances
     * live until the pipeline ends, so a model kept by each would add up to more than the heap.
     */
    default void release() {
    }

    @Override
    default void close() throws IOException {
    }
}
