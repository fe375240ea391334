package qlab.pipeline.pareto;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import qlab.pipeline.results.ResultRow;

/**
 * Pareto frontiers over two objectives: the points that no other point beats on one objective
 * without losing on the other. Points with equal values on both objectives do not dominate each
 * other, so both stay on the frontier.
 */
public final class ParetoFrontier {

    public enum Goal {
        MINIMIZE, MAXIMIZE;

        /** Whether {@code a} is at least as good as {@code b}. */
        boolean noWorse(double a, double b) {
            return this == MINIMIZE ? a <= b : a >= b;
        }

        boolean better(double a, double b) {
            return this == MINIMIZE ? a < b : a > b;
        }
    }

    /** One objective: a result column and whether less or more is better. */
    public record Axis(String column, Goal goal, Function<ResultRow, Double> value) {
    }

    /**
     * A frontier the sweep reports.
     *
     * @param column the result column that records membership
     */
    public record Criterion(String column, String title, Axis x, Axis y) {
        /**
         * Whether both objectives measure the quantization alone. Threads change only speed, so on
         * such a frontier the rows of one quantization measured at several thread counts are one point.
         */
        public boolean perQuantization() {
            return x != DECODE_TPS && y != DECODE_TPS;
        }

        /** What the frontier counts: quantizations, or configs (which include the thread count). */
        public String unit() {
            return perQuantization() ? "quantizations" : "rows";
        }

        /** The label of a row on this frontier: without the thread count on a per-quantization frontier. */
        public String label(ResultRow r) {
            return perQuantization() ? r.quantizationLabel() : r.label();
        }
    }

    public static final Axis BITS_PER_WEIGHT = new Axis("bits_per_weight", Goal.MINIMIZE, ResultRow::bitsPerWeight);
    public static final Axis KL_MEAN = new Axis("kl_mean", Goal.MINIMIZE, ResultRow::klMean);
    public static final Axis PPL = new Axis("ppl", Goal.MINIMIZE, ResultRow::ppl);
    public static final Axis DECODE_TPS = new Axis("decode_tps_median", Goal.MAXIMIZE, ResultRow::decodeTpsMedian);

    public static final Criterion BPW_KL = new Criterion("pareto_bpw_kl", "bits per weight vs KL", BITS_PER_WEIGHT, KL_MEAN);
    public static final Criterion BPW_PPL = new Criterion("pareto_bpw_ppl", "bits per weight vs perplexity", BITS_PER_WEIGHT, PPL);
    public static final Criterion TPS_KL = new Criterion("pareto_tps_kl", "decode tok/s vs KL", DECODE_TPS, KL_MEAN);
    public static final List<Criterion> ALL = List.of(BPW_KL, BPW_PPL, TPS_KL);

    private ParetoFrontier() {
    }

    /**
     * Frontier membership of each point. A point with a non-finite coordinate is never on the
     * frontier and does not dominate anything.
     */
    public static boolean[] members(double[] x, Goal gx, double[] y, Goal gy) {
        if (x.length != y.length) {
            throw new IllegalArgumentException("x has " + x.length + " points, y has " + y.length);
        }
        int n = x.length;
        boolean[] on = new boolean[n];
        // Quadratic, and plainly correct: a sweep has at most a few thousand rows.
        for (int i = 0; i < n; i++) {
            if (!Double.isFinite(x[i]) || !Double.isFinite(y[i])) {
                continue;
            }
            boolean dominated = false;
            for (int j = 0; j < n && !dominated; j++) {
                if (j == i || !Double.isFinite(x[j]) || !Double.isFinite(y[j])) {
                    continue;
                }
                dominated = gx.noWorse(x[j], x[i]) && gy.noWorse(y[j], y[i])
                        && (gx.better(x[j], x[i]) || gy.better(y[j], y[i]));
            }
            on[i] = !dominated;
        }
        return on;
    }

    /**
     * The ok rows on the frontier of {@code criterion}, ordered along the x axis (best x first).
     * Rows missing either value are not candidates.
     */
    public static List<ResultRow> frontier(List<ResultRow> rows, Criterion criterion) {
        List<ResultRow> candidates = candidates(rows, criterion);
        double[] x = new double[candidates.size()];
        double[] y = new double[candidates.size()];
        for (int i = 0; i < x.length; i++) {
            x[i] = criterion.x().value().apply(candidates.get(i));
            y[i] = criterion.y().value().apply(candidates.get(i));
        }
        boolean[] on = members(x, criterion.x().goal(), y, criterion.y().goal());
        List<ResultRow> result = new ArrayList<>();
        for (int i = 0; i < on.length; i++) {
            if (on[i]) {
                result.add(candidates.get(i));
            }
        }
        Comparator<ResultRow> byX = Comparator.comparingDouble(r -> criterion.x().value().apply(r));
        result.sort(criterion.x().goal() == Goal.MINIMIZE ? byX : byX.reversed());
        return result;
    }

    /**
     * The ok rows that have both values of {@code criterion}. On a {@link Criterion#perQuantization}
     * frontier the rows of one quantization with the same two values (its configs at several thread
     * counts, whose quality is one measurement) are one candidate: the one with the fastest decode,
     * so that the table's speed column shows the best it did. Different measurements of one
     * quantization (other runs, other code) stay apart.
     */
    public static List<ResultRow> candidates(List<ResultRow> rows, Criterion criterion) {
        List<ResultRow> measured = rows.stream().filter(ResultRow::ok)
                .filter(r -> criterion.x().value().apply(r) != null && criterion.y().value().apply(r) != null)
                .toList();
        if (!criterion.perQuantization()) {
            return measured;
        }
        Map<String, ResultRow> fastest = new LinkedHashMap<>();
        for (ResultRow r : measured) {
            String point = r.quantizationKey() + "|" + criterion.x().value().apply(r) + "|" + criterion.y().value().apply(r);
            fastest.merge(point, r, (a, b) -> decodeTps(b) > decodeTps(a) ? b : a);
        }
        return List.copyOf(fastest.values());
    }

    private static double decodeTps(ResultRow r) {
        return r.decodeTpsMedian() == null ? Double.NEGATIVE_INFINITY : r.decodeTpsMedian();
    }
}
