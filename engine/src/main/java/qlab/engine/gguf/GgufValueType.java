package qlab.engine.gguf;

/**
 * The value types of GGUF metadata ({@code enum gguf_type}), with the bytes one scalar takes (0
 * for the variable-length string and array).
 */
public enum GgufValueType {
    UINT8(0, 1), INT8(1, 1), UINT16(2, 2), INT16(3, 2), UINT32(4, 4), INT32(5, 4), FLOAT32(6, 4), BOOL(7, 1),
    STRING(8, 0), ARRAY(9, 0), UINT64(10, 8), INT64(11, 8), FLOAT64(12, 8);

    /** The id stored in the file. */
    public final int id;
    /** Bytes of one value; 0 for STRING and ARRAY. */
    public final int size;

    GgufValueType(int id, int size) {
        this.id = id;
        this.size = size;
    }

    /** The fewest bytes one value can take in a file (a string: its 8-byte length). */
    int minBytes() {
        return this == STRING ? 8 : this == ARRAY ? 12 : size;
    }

    boolean isInteger() {
        return this != FLOAT32 && this != FLOAT64 && this != BOOL && size > 0;
    }

    /** The type with id {@code id}, or null. */
    static GgufValueType ofId(long id) {
        for (GgufValueType t : values()) {
            if (t.id == id) {
                return t;
            }
        }
        return null;
    }
}
