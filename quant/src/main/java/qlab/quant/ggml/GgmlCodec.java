package qlab.quant.ggml;

import java.lang.foreign.MemorySegment;

/**
 * How a qlab format's stored rows correspond to ggml's blocks of one {@link GgmlType}: the same
 * codes and scales, laid out as each side lays them out. Both directions are exact (a row converted
 * one way and back is the same bytes). Rows must hold a multiple of the type's block size.
 */
public interface GgmlCodec {

    /** The ggml type whose blocks this codec reads and writes. */
    GgmlType type();

    /**
     * Writes one qlab row ({@code format.bytesPerRow(cols)} bytes at src[srcOffset]) as
     * {@code type().rowBytes(cols)} bytes of ggml blocks at dst[dstOffset].
     */
    void toGgml(MemorySegment src, long srcOffset, int cols, MemorySegment dst, long dstOffset);

    /** The inverse of {@link #toGgml}: ggml blocks at src[srcOffset] into one qlab row at dst[dstOffset]. */
    void fromGgml(MemorySegment src, long srcOffset, int cols, MemorySegment dst, long dstOffset);
}
