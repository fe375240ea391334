package qlab.engine.gguf;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import qlab.engine.QlabException;

/**
 * The default sampling settings a GGUF carries ({@code general.sampling.*}), which llama.cpp's tools
 * start from unless told otherwise: read from a model directory's generation_config.json by the
 * field names llama.cpp's converter reads (gguf-py's {@code Metadata.load}), or copied from a GGUF.
 * Fields it does not read (e.g. transformers' {@code repetition_penalty}) are not carried.
 */
public final class GgufSampling {

    public static final String PREFIX = "general.sampling.";

    /** generation_config.json field, GGUF key suffix, and stored type, in the converter's order. */
    private static final String[][] FIELDS = {
        {"sequence", "sequence", "STRING"},
        {"top_k", "top_k", "INT32"},
        {"top_p", "top_p", "FLOAT32"},
        {"min_p", "min_p", "FLOAT32"},
        {"xtc_probability", "xtc_probability", "FLOAT32"},
        {"xtc_threshold", "xtc_threshold", "FLOAT32"},
        {"temperature", "temp", "FLOAT32"},
        {"penalty_last_n", "penalty_last_n", "INT32"},
        {"penalty_repeat", "penalty_repeat", "FLOAT32"},
        {"mirostat", "mirostat", "INT32"},
        {"mirostat_tau", "mirostat_tau", "FLOAT32"},
        {"mirostat_eta", "mirostat_eta", "FLOAT32"},
    };

    private GgufSampling() {}

    /** The {@code general.sampling.*} keys of a model directory; none without generation_config.json. */
    public static Map<String, GgufValue> metadataOf(Path modelDir) {
        Map<String, GgufValue> out = new LinkedHashMap<>();
        Path file = modelDir.resolve("generation_config.json");
        if (!Files.isRegularFile(file)) {
            return out;
        }
        JsonNode root;
        try {
            root = new ObjectMapper().readTree(file.toFile());
        } catch (IOException e) {
            // the converter skips an unreadable generation_config.json as well
            return out;
        }
        for (String[] f : FIELDS) {
            JsonNode v = root.path(f[0]);
            String key = PREFIX + f[1];
            switch (f[2]) {
                case "STRING" -> {
                    if (v.isTextual()) {
                        out.put(key, GgufValue.string(v.asText()));
                    }
                }
                case "INT32" -> {
                    if (v.isIntegralNumber() && v.canConvertToInt()) {
                        out.put(key, GgufValue.of(GgufValueType.INT32, (long) v.asInt()));
                    } else if (!v.isMissingNode() && !v.isNull()) {
                        throw new QlabException(file + ": field \"" + f[0] + "\" is " + v + ", expected an integer");
                    }
                }
                default -> {
                    if (v.isNumber()) {
                        out.put(key, GgufValue.f32(v.asDouble()));
                    } else if (!v.isMissingNode() && !v.isNull()) {
                        throw new QlabException(file + ": field \"" + f[0] + "\" is " + v + ", expected a number");
                    }
                }
            }
        }
        return out;
    }

    /** The {@code general.sampling.*} keys of a GGUF file, in file order. */
    public static Map<String, GgufValue> metadataOf(GgufFile f) {
        Map<String, GgufValue> out = new LinkedHashMap<>();
        f.metadata().forEach((k, v) -> {
            if (k.startsWith(PREFIX)) {
                out.put(k, v);
            }
        });
        return out;
    }
}
