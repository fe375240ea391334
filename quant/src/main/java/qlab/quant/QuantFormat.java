package qlab.quant;

import java.lang.foreign.MemorySegment;
import java.util.Optional;
import qlab.quant.ggml.GgmlCodec;

/**
 * A weight storage format: how one row of a [rows, cols] matrix is laid out in bytes, how it is
 * quantized and dequantized, and the kernels that read it ({@link #pack}). Instances are immutable
 * and thread-safe; get them from {@link Formats}, the only place that knows every format.
 *
 * <p>Rows are stored one after another, each {@link #bytesPerRow} bytes, little-endian. A row
 * whose width is not a multiple of the block is zero-padded (see each format's layout comment);
 * the padding is counted in {@link #bytesPerRow} and so in {@link #bitsPerWeight}.
 */
public interface QuantFormat {

    /** Registry name, e.g. {@code q4_0}. */
    String name();

    /**
     * Values that share one stored scale (the superblock for two-level formats such as q4_8 and
     * q2_8); 1 for the float formats, which have no scale; 0 for one scale per row (int8).
     */
    int groupSize();

    /** {@link #name()} when the group is the format's default, else e.g. {@code q4_0/g64}. */
    String label();

    /** Storage bytes of one row of {@code cols} values, padding included. */
    long bytesPerRow(int cols);

    /** Storage bits per weight, computed from {@link #bytesPerRow}: never from a table. */
    default double bitsPerWeight(int cols) {
        return bytesPerRow(cols) * 8.0 / cols;
    }

    /** True when the format has integer codes, and so an int8-activation kernel. */
    boolean isInteger();

    /**
     * Quantizes src[srcOffset .. srcOffset + cols) into {@link #bytesPerRow} bytes at dst[dstOffset].
     * Deterministic. Values must be finite.
     *
     * @param importance null for the plain reference quantizer; otherwise one non-negative weight
     *     per input channel (float[cols], an importance matrix diagonal): scales are then chosen to
     *     minimise the importance-weighted squared error over candidate scales per block.
     *     Float formats ignore it.
     */
    void quantizeRow(float[] src, int srcOffset, int cols, float[] importance, MemorySegment dst, long dstOffset);

    /** Decodes one stored row into dst[dstOffset .. dstOffset + cols). */
    void dequantizeRow(MemorySegment src, long srcOffset, int cols, float[] dst, int dstOffset);

    /**
     * The kernels' view of {@code rows} stored rows starting at data offset 0. Codes are read in
     * place from the segment (it may be memory-mapped); only scales are widened to a float array.
     */
    PackedWeights pack(MemorySegment data, int rows, int cols);

    /**
     * The ggml type whose blocks hold exactly this format's codes and scales, and the conversion
     * between the two layouts; empty for formats llama.cpp does not run.
     */
    default Optional<GgmlCodec> ggml() {
        return Optional.empty();
    }
}
