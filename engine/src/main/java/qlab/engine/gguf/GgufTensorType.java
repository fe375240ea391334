package qlab.engine.gguf;

import java.util.function.IntFunction;

/**
 * A ggml tensor type as the container needs it: the id a tensor info stores, its name, and the
 * bytes a row takes ({@code typeSize} bytes per block of {@code blockSize} values). The full table
 * of ggml's types lives with the quantization formats (qlab.quant.ggml.GgmlType); the container is
 * given a lookup, so that it can check every tensor's extent without knowing the formats.
 */
public record GgufTensorType(int id, String name, int blockSize, int typeSize) {

    public static final GgufTensorType F32 = new GgufTensorType(0, "F32", 1, 4);
    public static final GgufTensorType F16 = new GgufTensorType(1, "F16", 1, 2);
    public static final GgufTensorType BF16 = new GgufTensorType(30, "BF16", 1, 2);

    /** The three float types, the ones the engine widens to f32 by itself. */
    public static final IntFunction<GgufTensorType> FLOATS = id -> switch (id) {
        case 0 -> F32;
        case 1 -> F16;
        case 30 -> BF16;
        default -> null;
    };

    public boolean isFloat() {
        return blockSize == 1 && (id == 0 || id == 1 || id == 30);
    }

    /** Bytes of a row of {@code ne0} values; -1 when ne0 is not a multiple of the block. */
    public long rowBytes(long ne0) {
        return ne0 % blockSize != 0 ? -1 : ne0 / blockSize * typeSize;
    }

    @Override
    public String toString() {
        return name;
    }
}
