package qlab.engine.gguf;

import java.util.List;

/**
 * One metadata value of a GGUF file with its stored type. Integers of every width are held as
 * {@code Long} (UINT64 above 2^63 as its two's-complement bits), FLOAT32 and FLOAT64 as
 * {@code Double} (a FLOAT32 widened exactly), BOOL as {@code Boolean}, STRING as {@code String};
 * an ARRAY holds a {@code List} of such values, all of {@link #elementType}.
 */
public record GgufValue(GgufValueType type, GgufValueType elementType, Object value) {

    public static GgufValue of(GgufValueType type, Object value) {
        return new GgufValue(type, null, value);
    }

    public static GgufValue string(String s) {
        return of(GgufValueType.STRING, s);
    }

    public static GgufValue u32(long v) {
        return of(GgufValueType.UINT32, v);
    }

    public static GgufValue f32(double v) {
        return of(GgufValueType.FLOAT32, (double) (float) v);
    }

    public static GgufValue array(GgufValueType elementType, List<?> values) {
        return new GgufValue(GgufValueType.ARRAY, elementType, List.copyOf(values));
    }

    /** The elements of an ARRAY value. */
    public List<?> list() {
        return (List<?>) value;
    }

    /** A short rendering for messages and listings: arrays by type and length. */
    public String describe() {
        if (type == GgufValueType.ARRAY) {
            return "[" + elementType + " x " + list().size() + "]";
        }
        if (type == GgufValueType.STRING) {
            String s = (String) value;
            return "\"" + (s.length() > 60 ? s.substring(0, 60) + "..." : s).replace("\n", "\\n") + "\"";
        }
        return String.valueOf(value);
    }
}
