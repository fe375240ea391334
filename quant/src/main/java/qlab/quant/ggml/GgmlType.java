package qlab.quant.ggml;

import java.util.Optional;

/**
 * ggml's tensor types as GGUF files number them ({@code enum ggml_type} in ggml.h): the id stored
 * in a tensor info, the values one block holds and the bytes it takes. Ids that ggml retired are
 * absent. {@link #supported} says whether qlab reads and writes the type; the others are known by
 * name only, so that a file using one is refused naming its type.
 */
public enum GgmlType {
    F32(0, 1, 4, true),
    F16(1, 1, 2, true),
    Q4_0(2, 32, 18, true),
    Q4_1(3, 32, 20, true),
    Q5_0(6, 32, 22, true),
    Q5_1(7, 32, 24, true),
    Q8_0(8, 32, 34, true),
    Q8_1(9, 32, 36, false),
    Q2_K(10, 256, 84, true),
    Q3_K(11, 256, 110, true),
    Q4_K(12, 256, 144, true),
    Q5_K(13, 256, 176, true),
    Q6_K(14, 256, 210, true),
    Q8_K(15, 256, 292, false),
    IQ2_XXS(16, 256, 66, false),
    IQ2_XS(17, 256, 74, false),
    IQ3_XXS(18, 256, 98, false),
    IQ1_S(19, 256, 50, false),
    IQ4_NL(20, 32, 18, true),
    IQ3_S(21, 256, 110, false),
    IQ2_S(22, 256, 82, false),
    IQ4_XS(23, 256, 136, true),
    I8(24, 1, 1, false),
    I16(25, 1, 2, false),
    I32(26, 1, 4, false),
    I64(27, 1, 8, false),
    F64(28, 1, 8, false),
    IQ1_M(29, 256, 56, false),
    BF16(30, 1, 2, true),
    TQ1_0(34, 256, 54, false),
    TQ2_0(35, 256, 66, false),
    MXFP4(39, 32, 17, false);

    /** The id in a GGUF tensor info. */
    public final int id;
    /** Values per block. */
    public final int blockSize;
    /** Bytes per block. */
    public final int typeSize;
    /** Whether qlab reads and writes tensors of this type. */
    public final boolean supported;

    GgmlType(int id, int blockSize, int typeSize, boolean supported) {
        this.id = id;
        this.blockSize = blockSize;
        this.typeSize = typeSize;
        this.supported = supported;
    }

    /** Bytes of one row of {@code cols} values; cols must be a multiple of {@link #blockSize}. */
    public long rowBytes(long cols) {
        if (cols % blockSize != 0) {
            throw new IllegalArgumentException(name() + " rows hold multiples of " + blockSize + " values, not " + cols);
        }
        return cols / blockSize * typeSize;
    }

    /** The type with GGUF id {@code id}, if ggml defines one. */
    public static Optional<GgmlType> ofId(int id) {
        for (GgmlType t : values()) {
            if (t.id == id) {
                return Optional.of(t);
            }
        }
        return Optional.empty();
    }
}
