package qlab.engine.chat;

import com.fasterxml.jackson.databind.JsonNode;
import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.util.Iterator;
import java.util.Map;

/**
 * JSON text exactly as Python's {@code json.dumps(value, ensure_ascii=False)} writes it, which is what
 * transformers' {@code tojson} filter gives chat templates: {@code ", "} and {@code ": "} separators, keys in
 * insertion order, non-ASCII characters as they are, control characters escaped, and floats in Python's
 * {@code repr} form ({@code 1.0}, {@code 1e-05}, {@code 1e+16}).
 */
final class PythonJson {
    private PythonJson() {
    }

    static String dumps(JsonNode value) {
        StringBuilder out = new StringBuilder();
        write(value, out);
        return out.toString();
    }

    private static void write(JsonNode value, StringBuilder out) {
        switch (value.getNodeType()) {
            case OBJECT -> {
                out.append('{');
                Iterator<Map.Entry<String, JsonNode>> fields = value.properties().iterator();
                while (fields.hasNext()) {
                    Map.Entry<String, JsonNode> field = fields.next();
                    writeString(field.getKey(), out);
                    out.append(": ");
                    write(field.getValue(), out);
                    if (fields.hasNext()) {
                        out.append(", ");
                    }
                }
                out.append('}');
            }
            case ARRAY -> {
                out.append('[');
                for (int i = 0; i < value.size(); i++) {
                    if (i > 0) {
                        out.append(", ");
                    }
                    write(value.get(i), out);
                }
                out.append(']');
            }
            case STRING -> writeString(value.textValue(), out);
            case BOOLEAN -> out.append(value.booleanValue() ? "true" : "false");
            case NULL, MISSING -> out.append("null");
            case NUMBER -> out.append(value.isIntegralNumber() ? value.bigIntegerValue().toString()
                    : pythonFloatRepr(value.doubleValue()));
            default -> throw new IllegalArgumentException("cannot write JSON node of type " + value.getNodeType());
        }
    }

    private static void writeString(String text, StringBuilder out) {
        out.append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                case '\b' -> out.append("\\b");
                case '\f' -> out.append("\\f");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }

    /**
     * Python's {@code repr(float)}: the shortest digits that round-trip, laid out as Python does: positional when
     * the decimal exponent is in [-4, 16), else scientific with a sign and at least two exponent digits.
     */
    /**
     * The shortest decimal that parses back to {@code value} (positive, finite), the closest one among equals.
     * {@link Double#toString} gives exactly that except that it never uses fewer than two digits (it prints
     * {@code 4.9E-324} where Python prints {@code 5e-324}), so one-digit candidates are checked here.
     */
    private static BigDecimal shortestDecimal(double value) {
        BigDecimal java = new BigDecimal(Double.toString(value)).stripTrailingZeros();
        if (java.precision() != 2) {
            return java;
        }
        BigDecimal exact = new BigDecimal(value);
        BigDecimal best = null;
        for (RoundingMode mode : new RoundingMode[] {RoundingMode.FLOOR, RoundingMode.CEILING}) {
            BigDecimal candidate = exact.round(new MathContext(1, mode));
            if (candidate.signum() > 0 && candidate.doubleValue() == value) {
                if (best == null || candidate.subtract(exact).abs().compareTo(best.subtract(exact).abs()) < 0) {
                    best = candidate;
                }
            }
        }
        return best != null ? best.stripTrailingZeros() : java;
    }

    static String pythonFloatRepr(double value) {
        if (Double.isNaN(value)) {
            return "NaN";
        }
        if (Double.isInfinite(value)) {
            return value > 0 ? "Infinity" : "-Infinity";
        }
        String sign = (value < 0 || (value == 0.0 && 1.0 / value < 0)) ? "-" : "";
        if (value == 0.0) {
            return sign + "0.0";
        }
        BigDecimal shortest = shortestDecimal(Math.abs(value));
        String digits = shortest.unscaledValue().toString();
        // value = 0.d1d2...dn * 10^point
        int point = digits.length() - shortest.scale();
        StringBuilder out = new StringBuilder(sign);
        if (point > -4 && point <= 16) {
            if (point <= 0) {
                out.append("0.").append("0".repeat(-point)).append(digits);
            } else if (point < digits.length()) {
                out.append(digits, 0, point).append('.').append(digits, point, digits.length());
            } else {
                out.append(digits).append("0".repeat(point - digits.length())).append(".0");
            }
        } else {
            out.append(digits.charAt(0));
            if (digits.length() > 1) {
                out.append('.').append(digits, 1, digits.length());
            }
            int exponent = point - 1;
            out.append(exponent < 0 ? "e-" : "e+");
            String magnitude = Integer.toString(Math.abs(exponent));
            out.append(magnitude.length() < 2 ? "0" + magnitude : magnitude);
        }
        return out.toString();
    }
}
