package qlab.engine.eval;

import java.util.Arrays;
import java.util.stream.Collectors;
import qlab.engine.QlabException;

/** Which tokens of each context window are scored. */
public enum ScoringMode {
    /**
     * As llama-perplexity does it, so figures can be put side by side: only full windows; in each,
     * the tokens at window positions ctx/2+1 .. ctx-1, every one with at least ctx/2 tokens of
     * context.
     */
    SECOND_HALF("second-half"),
    /** Every token of each window but its first; a shorter last window is scored too. */
    ALL("all");

    private final String id;

    ScoringMode(String id) {
        this.id = id;
    }

    public String id() {
        return id;
    }

    public static ScoringMode byId(String id) {
        for (ScoringMode m : values()) {
            if (m.id.equals(id)) {
                return m;
            }
        }
        throw new QlabException("unknown scoring mode \"" + id + "\"; known: "
                + Arrays.stream(values()).map(ScoringMode::id).collect(Collectors.joining(", ")));
    }
}
