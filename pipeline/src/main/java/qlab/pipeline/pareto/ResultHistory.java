package qlab.pipeline.pareto;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import qlab.pipeline.results.ResultRow;

/** Views over rows concatenated from any set of result files. */
public final class ResultHistory {

    private ResultHistory() {
    }

    /**
     * The newest row of each (config, model) pair: what the current state of a config is when the
     * files hold several measurements of it (a failed run then a successful one, or runs of older
     * code). Ties in time keep the later run id.
     */
    public static List<ResultRow> latest(List<ResultRow> rows) {
        Map<String, ResultRow> newest = new LinkedHashMap<>();
        List<ResultRow> sorted = new ArrayList<>(rows);
        sorted.sort(Comparator.comparingLong(ResultRow::timestamp)
                .thenComparing(r -> r.runId() == null ? "" : r.runId()));
        for (ResultRow r : sorted) {
            String key = r.configId() + "|" + r.modelHash();
            ResultRow previous = newest.get(key);
            // A skipped or failed row never hides an ok measurement of the same config.
            if (previous == null || r.ok() || !previous.ok()) {
                newest.put(key, r);
            }
        }
        return List.copyOf(newest.values());
    }
}
