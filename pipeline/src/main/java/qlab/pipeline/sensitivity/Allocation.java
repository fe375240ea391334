package qlab.pipeline.sensitivity;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * One format per tensor group under a size budget, minimising the predicted KL: the sum of the
 * groups' KL increases measured one group at a time (a multiple-choice knapsack).
 *
 * <p>Solved exactly by dynamic programming over the Pareto frontier of partial mixes ({@link
 * #best(List, long)}); for frontiers too large, over bytes in buckets of {@code unit} bytes: each
 * option's bytes are rounded up to whole buckets, so every mix found fits the budget in true bytes,
 * and with a unit dividing every option's bytes the answer is the exact optimum. A Lagrangian
 * sweep (minimise KL + λ·bytes per group, bisect λ) is cheaper but only reaches mixes on the lower
 * convex hull of the bytes/KL trade-off: with a handful of formats per group, a budget between two
 * hull points is left partly unspent. The frontier stays small for the tables a sensitivity sweep gives (29 or 8
 * groups × 5 formats on the demo model and the 0.5B preset), so the exact method costs milliseconds.
 */
public final class Allocation {

    /** A format a group can take: its stored bytes and the KL it adds. */
    public record Option(String format, long bytes, double klIncrease) {
    }

    /** A group and its options. */
    public record Group(String id, long weights, List<Option> options) {
    }

    /**
     * A chosen mix.
     *
     * @param choice      the format of each group, by group id, in the groups' order
     * @param bytes       its stored bytes (true bytes, not bucketed)
     * @param predictedKl the sum of the chosen options' KL increases
     */
    public record Mix(Map<String, String> choice, long bytes, double predictedKl) {
    }

    /** Buckets of the byte axis when it is too long to take whole: rounding then costs under 0.1% of the budget. */
    public static final int BUCKETS = 4096;
    /** Table cells (groups × byte steps) up to which the byte axis is taken in steps of the options' common divisor. */
    static final long EXACT_CELLS = 64L << 20;

    private Allocation() {
    }

    /**
     * The best mix within {@code budget} bytes, exactly: dynamic programming over the frontier of
     * partial mixes (after each group, the (bytes, KL) pairs that no other pair beats in both),
     * which stays small because a format per group adds few new sizes that lower the KL. Should the
     * frontier pass {@link #FRONTIER_LIMIT} pairs, the byte axis is taken in steps instead: the
     * greatest common divisor of the options' bytes (still exact) while the table stays under
     * {@link #EXACT_CELLS} cells, else about {@link #BUCKETS} buckets of the budget, each option's
     * bytes rounded up. Rounding up can exclude a mix that fits to the byte: with buckets alone, the
     * uniform iq4_nl that fills a 4.5 bits/weight budget exactly was out of reach.
     */
    public static Optional<Mix> best(List<Group> groups, long budget) {
        Optional<Optional<Mix>> exact = frontier(groups, budget);
        if (exact.isPresent()) {
            return exact.get();
        }
        long divisor = 0;
        for (Group g : groups) {
            for (Option o : g.options()) {
                divisor = gcd(divisor, o.bytes());
            }
        }
        divisor = Math.max(1, divisor);
        if ((double) groups.size() * (budget / divisor + 1) <= EXACT_CELLS) {
            return best(groups, budget, divisor);
        }
        long coarse = Math.max(1, budget / BUCKETS);
        return best(groups, budget, Math.max(divisor, coarse / divisor * divisor));
    }

    /** Pairs a frontier may hold before {@link #best(List, long)} steps the byte axis instead. */
    static final int FRONTIER_LIMIT = 1 << 20;

    /**
     * The exact optimum by the Pareto frontier of partial mixes; empty (outer) when the frontier
     * grew past {@link #FRONTIER_LIMIT}, empty (inner) when no mix fits.
     */
    static Optional<Optional<Mix>> frontier(List<Group> groups, long budget) {
        int n = groups.size();
        if (n == 0) {
            return Optional.of(Optional.empty());
        }
        // Per group: the frontier's bytes and KL in order of bytes, and for each pair its option and parent.
        long[] bytes = {0};
        double[] kl = {0};
        List<int[]> options = new ArrayList<>();
        List<int[]> parents = new ArrayList<>();
        for (Group g : groups) {
            List<Option> opts = g.options();
            int m = bytes.length * opts.size();
            long[] cb = new long[m];
            double[] ck = new double[m];
            int[] co = new int[m];
            int[] cp = new int[m];
            int c = 0;
            for (int i = 0; i < bytes.length; i++) {
                for (int o = 0; o < opts.size(); o++) {
                    long b = bytes[i] + opts.get(o).bytes();
                    if (b <= budget) {
                        cb[c] = b;
                        ck[c] = kl[i] + opts.get(o).klIncrease();
                        co[c] = o;
                        cp[c] = i;
                        c++;
                    }
                }
            }
            Integer[] order = new Integer[c];
            for (int i = 0; i < c; i++) {
                order[i] = i;
            }
            Arrays.sort(order, (a, b) -> cb[a] != cb[b] ? Long.compare(cb[a], cb[b]) : Double.compare(ck[a], ck[b]));
            // Keep a pair only if its KL is below that of every pair of no more bytes.
            int kept = 0;
            double lowest = Double.POSITIVE_INFINITY;
            int[] keep = new int[c];
            for (int i : order) {
                if (ck[i] < lowest) {
                    lowest = ck[i];
                    keep[kept++] = i;
                }
            }
            if (kept > FRONTIER_LIMIT) {
                return Optional.empty();
            }
            bytes = new long[kept];
            kl = new double[kept];
            int[] opt = new int[kept];
            int[] par = new int[kept];
            for (int i = 0; i < kept; i++) {
                bytes[i] = cb[keep[i]];
                kl[i] = ck[keep[i]];
                opt[i] = co[keep[i]];
                par[i] = cp[keep[i]];
            }
            options.add(opt);
            parents.add(par);
            if (kept == 0) {
                return Optional.of(Optional.empty());
            }
        }
        // The last pair of the frontier has the lowest KL within the budget.
        int at = bytes.length - 1;
        Option[] picked = new Option[n];
        for (int g = n - 1; g >= 0; g--) {
            picked[g] = groups.get(g).options().get(options.get(g)[at]);
            at = parents.get(g)[at];
        }
        return Optional.of(Optional.of(mix(groups, picked)));
    }

    /** The mix of one option per group: its true bytes and the sum of its KL increases. */
    private static Mix mix(List<Group> groups, Option[] picked) {
        Map<String, String> chosen = new LinkedHashMap<>();
        long bytes = 0;
        double kl = 0;
        for (int g = 0; g < picked.length; g++) {
            chosen.put(groups.get(g).id(), picked[g].format());
            bytes += picked[g].bytes();
            kl += picked[g].klIncrease();
        }
        return new Mix(chosen, bytes, kl);
    }

    private static long gcd(long a, long b) {
        while (b != 0) {
            long t = a % b;
            a = b;
            b = t;
        }
        return a;
    }

    /** The best mix within {@code budget} bytes with bytes rounded up to multiples of {@code unit}; empty if none fits. */
    public static Optional<Mix> best(List<Group> groups, long budget, long unit) {
        int cap = Math.toIntExact(budget / unit);
        int n = groups.size();
        // best[c] = least KL of the groups so far within c buckets; choice[g][c] = option of group g there.
        double[] best = new double[cap + 1];
        byte[][] choice = new byte[n][cap + 1]; // option indexes: at most 127 formats per group
        for (int g = 0; g < n; g++) {
            List<Option> opts = groups.get(g).options();
            if (opts.size() > Byte.MAX_VALUE) {
                throw new IllegalArgumentException("group " + groups.get(g).id() + ": more than 127 formats");
            }
            double[] next = new double[cap + 1];
            Arrays.fill(next, Double.POSITIVE_INFINITY);
            for (int c = 0; c <= cap; c++) {
                for (int o = 0; o < opts.size(); o++) {
                    long w = (opts.get(o).bytes() + unit - 1) / unit;
                    if (w <= c && best[(int) (c - w)] + opts.get(o).klIncrease() < next[c]) {
                        next[c] = best[(int) (c - w)] + opts.get(o).klIncrease();
                        choice[g][c] = (byte) o;
                    }
                }
            }
            best = next;
        }
        if (n == 0 || best[cap] == Double.POSITIVE_INFINITY) {
            return Optional.empty();
        }
        Option[] picked = new Option[n];
        int c = cap;
        for (int g = n - 1; g >= 0; g--) {
            picked[g] = groups.get(g).options().get(choice[g][c]);
            c -= (int) ((picked[g].bytes() + unit - 1) / unit);
        }
        return Optional.of(mix(groups, picked));
    }

    /** The groups and options of a sensitivity table. */
    public static List<Group> groups(SensitivityTable table) {
        Map<String, List<Option>> options = new LinkedHashMap<>();
        Map<String, Long> weights = new LinkedHashMap<>();
        for (SensitivityTable.Entry e : table.entries()) {
            options.computeIfAbsent(e.group(), k -> new ArrayList<>())
                    .add(new Option(e.planFormat(), e.bytes(), e.klIncrease()));
            weights.put(e.group(), e.weights());
        }
        List<Group> groups = new ArrayList<>();
        options.forEach((id, opts) -> groups.add(new Group(id, weights.get(id), List.copyOf(opts))));
        return groups;
    }

    /** Weights of all groups together: what bits per weight are counted over. */
    public static long weights(List<Group> groups) {
        return groups.stream().mapToLong(Group::weights).sum();
    }

    /**
     * The mix as a quantization plan: the format holding most weights is the default, every other
     * group an override by its selector ({@code q4_0/g32+L0.down=q8_0/g32+emb=q8_0/g32}).
     */
    public static String plan(List<Group> groups, Mix mix) {
        Map<String, Long> weightsByFormat = new LinkedHashMap<>();
        for (Group g : groups) {
            weightsByFormat.merge(mix.choice().get(g.id()), g.weights(), Long::sum);
        }
        String base = weightsByFormat.entrySet().stream().max(Map.Entry.comparingByValue()).orElseThrow().getKey();
        StringBuilder plan = new StringBuilder(base);
        for (Group g : groups) {
            String f = mix.choice().get(g.id());
            if (!f.equals(base)) {
                plan.append('+').append(g.id()).append('=').append(f);
            }
        }
        return qlab.quant.checkpoint.QuantPlan.parse(plan.toString()).toString();
    }
}
