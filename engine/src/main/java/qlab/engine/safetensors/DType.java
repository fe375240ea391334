package qlab.engine.safetensors;

/** Element types of the safetensors format, with their sizes in bytes. */
public enum DType {
    F64(8), F32(4), F16(2), BF16(2),
    I64(8), I32(4), I16(2), I8(1), U8(1), BOOL(1),
    F8_E4M3(1), F8_E5M2(1), U16(2), U32(4), U64(8);

    private final int bytes;

    DType(int bytes) {
        this.bytes = bytes;
    }

    public int bytes() {
        return bytes;
    }

    /** Whether it holds floating-point weights this engine widens to f32 exactly. */
    public boolean isWidenableFloat() {
        return this == F32 || this == F16 || this == BF16;
    }

    /** The enum constant for a header's dtype string, or null if the name is unknown. */
    public static DType byName(String name) {
        for (DType d : values()) {
            if (d.name().equals(name)) {
                return d;
            }
        }
        return null;
    }
}
