package qlab.pipeline.matrix;

import java.io.Serializable;
import java.util.Map;
import java.util.TreeMap;

/** One entry of the {@code formats} axis: a base format and formats for classes of tensors. */
public record FormatChoice(String base, Map<String, String> overrides) implements Serializable {
    public FormatChoice {
        overrides = new TreeMap<>(overrides);
    }
}
