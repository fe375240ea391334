package qlab.serve;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads typed, bounded fields of a request body; a field of the wrong type or out of range is a
 * 400 naming it. Absent and JSON null both mean "not given". Unknown fields are ignored.
 */
final class Fields {

    private final JsonNode body;

    Fields(JsonNode body) {
        if (body == null || !body.isObject()) {
            throw ApiError.invalid(null, "the request body must be a JSON object");
        }
        this.body = body;
    }

    JsonNode raw(String name) {
        JsonNode n = body.get(name);
        return n == null || n.isNull() ? null : n;
    }

    boolean has(String name) {
        return raw(name) != null;
    }

    boolean bool(String name, boolean fallback) {
        JsonNode n = raw(name);
        if (n == null) {
            return fallback;
        }
        if (!n.isBoolean()) {
            throw ApiError.invalid(name, "\"" + name + "\" must be a boolean, got " + describe(n));
        }
        return n.booleanValue();
    }

    /** An integer in [min, max]. */
    long integer(String name, long fallback, long min, long max) {
        JsonNode n = raw(name);
        if (n == null) {
            return fallback;
        }
        if (!n.isIntegralNumber() || !n.canConvertToLong()) {
            throw ApiError.invalid(name, "\"" + name + "\" must be an integer, got " + describe(n));
        }
        long v = n.longValue();
        if (v < min || v > max) {
            throw ApiError.invalid(name, "\"" + name + "\" must be between " + min + " and " + max + ", got " + v);
        }
        return v;
    }

    /** A finite number in [min, max]. */
    double number(String name, double fallback, double min, double max) {
        JsonNode n = raw(name);
        if (n == null) {
            return fallback;
        }
        if (!n.isNumber()) {
            throw ApiError.invalid(name, "\"" + name + "\" must be a number, got " + describe(n));
        }
        double v = n.doubleValue();
        if (!(v >= min && v <= max)) {
            throw ApiError.invalid(name, "\"" + name + "\" must be between " + num(min) + " and " + num(max) + ", got "
                    + n.asText());
        }
        return v;
    }

    /** {@code stop}: a string or an array of at most 4 non-empty strings. */
    List<String> stopStrings() {
        JsonNode n = raw("stop");
        List<String> out = new ArrayList<>();
        if (n == null) {
            return out;
        }
        if (n.isTextual()) {
            out.add(n.textValue());
        } else if (n.isArray()) {
            if (n.size() > 4) {
                throw ApiError.invalid("stop", "\"stop\" takes at most 4 strings, got " + n.size());
            }
            for (JsonNode s : n) {
                if (!s.isTextual()) {
                    throw ApiError.invalid("stop", "\"stop\" must be a string or an array of strings, got an element "
                            + describe(s));
                }
                out.add(s.textValue());
            }
        } else {
            throw ApiError.invalid("stop", "\"stop\" must be a string or an array of strings, got " + describe(n));
        }
        for (String s : out) {
            if (s.isEmpty()) {
                throw ApiError.invalid("stop", "\"stop\" strings must not be empty");
            }
        }
        return out;
    }

    /** A JSON array of token ids, each in [0, vocab); a 400 naming {@code name} otherwise. */
    static int[] tokenIds(JsonNode array, String name, int vocab) {
        if (!array.isArray()) {
            throw ApiError.invalid(name, "\"" + name + "\" must be an array of token ids, got " + describe(array));
        }
        int[] ids = new int[array.size()];
        for (int i = 0; i < ids.length; i++) {
            JsonNode t = array.get(i);
            if (!t.isIntegralNumber() || !t.canConvertToInt() || t.intValue() < 0 || t.intValue() >= vocab) {
                throw ApiError.invalid(name, "\"" + name + "\" token ids must be integers in [0, " + vocab + "), got "
                        + describe(t) + " at index " + i);
            }
            ids[i] = t.intValue();
        }
        return ids;
    }

    static String describe(JsonNode n) {
        return switch (n.getNodeType()) {
            case STRING -> "a string";
            case NUMBER -> "the number " + n.asText();
            case BOOLEAN -> "a boolean";
            case ARRAY -> "an array";
            case OBJECT -> "an object";
            default -> n.getNodeType().toString().toLowerCase(java.util.Locale.ROOT);
        };
    }

    private static String num(double v) {
        return v == Math.rint(v) ? Long.toString((long) v) : Double.toString(v);
    }
}
