package qlab.pipeline.sensitivity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class AllocationTest {

    /** The least total KL within the budget over every assignment, or infinity when none fits. */
    private static double bruteForce(List<Allocation.Group> groups, long budget) {
        return bruteForce(groups, 0, budget, 0.0);
    }

    private static double bruteForce(List<Allocation.Group> groups, int g, long left, double kl) {
        if (g == groups.size()) {
            return kl;
        }
        double best = Double.POSITIVE_INFINITY;
        for (Allocation.Option o : groups.get(g).options()) {
            if (o.bytes() <= left) {
                best = Math.min(best, bruteForce(groups, g + 1, left - o.bytes(), kl + o.klIncrease()));
            }
        }
        return best;
    }

    private static List<Allocation.Group> random(SplittableRandom rnd, int groups, int formats) {
        List<Allocation.Group> out = new ArrayList<>();
        for (int g = 0; g < groups; g++) {
            List<Allocation.Option> opts = new ArrayList<>();
            for (int f = 0; f < formats; f++) {
                // Not monotone on purpose: a bigger format may lose more, and the DP must not assume otherwise.
                opts.add(new Allocation.Option("f" + f, 1 + rnd.nextInt(40), rnd.nextDouble()));
            }
            out.add(new Allocation.Group("g" + g, 10, opts));
        }
        return out;
    }

    @Test
    void exactAtByteResolutionAgainstBruteForce() {
        SplittableRandom rnd = new SplittableRandom(25);
        for (int trial = 0; trial < 300; trial++) {
            List<Allocation.Group> groups = random(rnd, 1 + rnd.nextInt(6), 1 + rnd.nextInt(4));
            long budget = rnd.nextInt(150);
            double expected = bruteForce(groups, budget);
            Optional<Allocation.Mix> mix = Allocation.best(groups, budget, 1);
            if (Double.isInfinite(expected)) {
                assertTrue(mix.isEmpty(), "trial " + trial);
                continue;
            }
            Allocation.Mix m = mix.orElseThrow();
            assertEquals(expected, m.predictedKl(), 1e-12, "trial " + trial);
            assertTrue(m.bytes() <= budget, "trial " + trial);
            // The reported bytes and KL are those of the chosen formats.
            long bytes = 0;
            double kl = 0;
            for (Allocation.Group g : groups) {
                String f = m.choice().get(g.id());
                Allocation.Option o = g.options().stream().filter(x -> x.format().equals(f)).findFirst().orElseThrow();
                bytes += o.bytes();
                kl += o.klIncrease();
            }
            assertEquals(bytes, m.bytes());
            assertEquals(kl, m.predictedKl(), 1e-12);
        }
    }

    @Test
    void theFrontierIsExactAtAnyByteCountAgainstBruteForce() {
        SplittableRandom rnd = new SplittableRandom(41);
        for (int trial = 0; trial < 300; trial++) {
            int n = 1 + rnd.nextInt(7);
            List<Allocation.Group> groups = new ArrayList<>();
            for (int g = 0; g < n; g++) {
                List<Allocation.Option> opts = new ArrayList<>();
                for (int f = 0, formats = 1 + rnd.nextInt(5); f < formats; f++) {
                    opts.add(new Allocation.Option("f" + f, 1 + rnd.nextLong(300_000_000L), rnd.nextDouble()));
                }
                groups.add(new Allocation.Group("g" + g, 10, opts));
            }
            long budget = rnd.nextLong(900_000_000L);
            double expected = bruteForce(groups, budget);
            Optional<Allocation.Mix> mix = Allocation.frontier(groups, budget).orElseThrow();
            assertEquals(Double.isInfinite(expected), mix.isEmpty(), "trial " + trial);
            mix.ifPresent(m -> {
                assertEquals(expected, m.predictedKl(), 1e-12);
                assertTrue(m.bytes() <= budget);
            });
            assertEquals(mix, Allocation.best(groups, budget));
        }
    }

    @Test
    void aMixThatFillsTheBudgetExactlyIsFoundAtLargeByteCounts() {
        // Three groups of a megabyte: uniform "x" fills the budget to the byte. Buckets of budget/4096
        // bytes round each x up past its share; steps of the options' common divisor (2 bytes) do not.
        List<Allocation.Group> groups = new ArrayList<>();
        for (int g = 0; g < 3; g++) {
            groups.add(new Allocation.Group("g" + g, 1_000_000, List.of(
                    new Allocation.Option("x", 1_000_002, 0.1), new Allocation.Option("y", 400_002, 1.0))));
        }
        long budget = 3_000_006;
        assertTrue(Allocation.best(groups, budget, budget / Allocation.BUCKETS).orElseThrow().predictedKl() > 0.3 + 1e-9,
                "coarse buckets miss the exact fit");
        Allocation.Mix m = Allocation.best(groups, budget).orElseThrow();
        assertEquals(Map.of("g0", "x", "g1", "x", "g2", "x"), m.choice());
        assertEquals(budget, m.bytes());
        assertEquals(bruteForce(groups, budget), m.predictedKl(), 1e-12);
        // One byte less and x fits only twice.
        assertEquals(bruteForce(groups, budget - 1), Allocation.best(groups, budget - 1).orElseThrow().predictedKl(), 1e-12);
    }

    @Test
    void largeTablesFallBackToBucketsThatStillFitTheBudget() {
        SplittableRandom rnd = new SplittableRandom(3);
        List<Allocation.Group> groups = new ArrayList<>();
        for (int g = 0; g < 40; g++) {
            groups.add(new Allocation.Group("g" + g, 1L << 20, List.of(
                    new Allocation.Option("a", (2L << 20) + 2 * rnd.nextInt(1000), rnd.nextDouble()),
                    new Allocation.Option("b", (4L << 20) + 2 * rnd.nextInt(1000), rnd.nextDouble() / 10))));
        }
        long budget = 120L << 20; // 40 groups x 63M two-byte steps: past EXACT_CELLS, bucketed
        Allocation.Mix m = Allocation.best(groups, budget).orElseThrow();
        assertTrue(m.bytes() <= budget);
        assertEquals(40, m.choice().size());
    }

    @Test
    void bucketedBytesStillFitTheBudgetAndLoseLittle() {
        SplittableRandom rnd = new SplittableRandom(7);
        for (int trial = 0; trial < 100; trial++) {
            List<Allocation.Group> groups = random(rnd, 2 + rnd.nextInt(5), 2 + rnd.nextInt(3));
            long budget = 60 + rnd.nextInt(120);
            Optional<Allocation.Mix> coarse = Allocation.best(groups, budget, 7);
            double exact = bruteForce(groups, budget);
            // Rounding up never admits a mix over the budget, and finds one whenever every option fits in
            // a bucket's slack; its KL is never better than the exact optimum.
            coarse.ifPresent(m -> {
                assertTrue(m.bytes() <= budget);
                assertTrue(m.predictedKl() >= exact - 1e-12);
            });
        }
    }

    @Test
    void planNamesTheCommonestFormatByWeightsAndTheRestBySelector() {
        List<Allocation.Group> groups = List.of(
                new Allocation.Group("emb", 1000, List.of()), new Allocation.Group("L0.q", 100, List.of()),
                new Allocation.Group("L0.down", 300, List.of()), new Allocation.Group("L1.down", 300, List.of()));
        Allocation.Mix mix = new Allocation.Mix(Map.of("emb", "q8_0/g32", "L0.q", "q4_0/g32", "L0.down", "q4_0/g32",
                "L1.down", "q4_0/g32"), 0, 0);
        // q4_0 holds 700 weights, q8_0 1000: q8_0 is the default.
        assertEquals("q8_0/g32+L0.q=q4_0/g32+L0.down=q4_0/g32+L1.down=q4_0/g32", Allocation.plan(groups, mix));
    }
}
