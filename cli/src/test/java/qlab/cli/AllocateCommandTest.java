package qlab.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import qlab.pipeline.matrix.SweepFileParser;
import qlab.pipeline.matrix.SweepMatrix;
import qlab.pipeline.sensitivity.AllocatedMixes;
import qlab.pipeline.sensitivity.SensitivityTable;
import qlab.quant.checkpoint.QuantPlan;

class AllocateCommandTest {

    @TempDir
    Path dir;

    /**
     * Three groups of 1000 weights in f32 (4000 B, the reference), q8_0 (1062 B) and q4_0 (562 B):
     * emb hurts most when quantized, L0.q least.
     */
    private Path table() {
        List<SensitivityTable.Entry> e = new ArrayList<>();
        String[] groups = {"emb", "L0.q", "L1.down"};
        double[] q4 = {0.30, 0.01, 0.05};
        double[] q8 = {0.02, 0.001, 0.004};
        for (int g = 0; g < groups.length; g++) {
            e.add(new SensitivityTable.Entry(groups[g], "f32", 32, 1000, 4000, 0.0, null, 0.0, null));
            e.add(new SensitivityTable.Entry(groups[g], "q8_0", 32, 1000, 1062, q8[g], 0.0001, q8[g], "c8" + g));
            e.add(new SensitivityTable.Entry(groups[g], "q4_0", 32, 1000, 562, q4[g], 0.001, q4[g], "c4" + g));
        }
        Path results = dir.resolve("results");
        new SensitivityTable("f32", "mh", e).write(SensitivityTable.file(results));
        return results;
    }

    @Test
    void plansForEachBudgetKeptForTheReport() throws Exception {
        Path results = table();
        // 3000 weights: 5.0 bits/weight is 1875 bytes, where only all-q4_0 fits (1686 B, KL 0.36; emb in q8_0
        // would make 1062 + 2 x 562 = 2186 B). 6.0 bits/weight (2250 B) takes emb, the most sensitive group, to q8_0.
        CliCapture c = CliCapture.run("allocate", results.toString(), "--budgets", "5.0,6.0,1.0");
        assertEquals(0, c.exit(), c.err());
        assertTrue(c.out().contains("3 groups, 3000 weights, reference f32"), c.out());
        assertTrue(c.out().contains("budget 5.0 (1875 bytes): 4.496 bits/weight, 1686 bytes, predicted KL 0.360000\n  q4_0/g32\n"), c.out());
        assertTrue(c.out().contains("budget 6.0 (2250 bytes): 5.829 bits/weight, 2186 bytes, predicted KL 0.080000\n"
                + "  q4_0/g32+emb=q8_0/g32\n"), c.out());
        assertTrue(c.out().contains("budget 1.0: no mix fits (the smallest is 4.496 bits/weight, 1686 bytes)"), c.out());
        AllocatedMixes kept = AllocatedMixes.find(List.of(results));
        assertEquals(2, kept.mixes().size());
        assertEquals("q4_0+emb=q8_0", kept.mixes().get(1).sweepMix());
        assertEquals(32, kept.mixes().get(1).groupSize());
        QuantPlan.parse(kept.mixes().get(1).plan()); // a plan every command accepts
    }

    @Test
    void budgetsInBytes() {
        CliCapture c = CliCapture.run("allocate", table().toString(), "--budgets", "2250B");
        assertEquals(0, c.exit(), c.err());
        assertTrue(c.out().contains("budget 2250B (2250 bytes): 5.829 bits/weight"), c.out());
        assertEquals(2250, AllocateCommand.budgetBytes("2250B", 1));
        assertEquals(1536, AllocateCommand.budgetBytes("1.5KiB", 1));
        assertEquals(1125, AllocateCommand.budgetBytes("3", 3000));
    }

    @Test
    void verificationSweepParsesAndListsTheMixes() throws Exception {
        Path results = table();
        Files.writeString(dir.resolve("eval.txt"), "Some text to evaluate on.\n".repeat(10));
        Path sens = dir.resolve("sens.yaml");
        Files.writeString(sens, """
                qlab_sweep: 1
                name: sens
                mode: sensitivity
                model:
                  preset: tiny
                  seed: 7
                formats: [q8_0, q4_0]
                group_sizes: [32]
                threads: [1]
                evaluation:
                  text: eval.txt
                  ctx: 64
                  tokens: 256
                measurements: [quality]
                """);
        Path out = dir.resolve("configs/verify.yaml");
        CliCapture c = CliCapture.run("allocate", results.toString(), "--budgets", "5.0,6.0", "--sweep-out", out.toString(),
                "--from", sens.toString(), "--compare", "Q4_K_M,q4_0+attn=q8_0");
        assertEquals(0, c.exit(), c.err());
        SweepMatrix m = SweepFileParser.parse(out);
        assertEquals(null, m.sensitivity());
        // The 5.0 budget's mix is uniform q4_0, a candidate already: listed once.
        assertEquals(List.of("q8_0", "q4_0", "Q4_K_M", "q4_0", "q4_0"), m.formats().stream().map(f -> f.base()).toList());
        assertEquals(java.util.Map.of("attn", "q8_0"), m.formats().get(3).overrides());
        assertEquals(java.util.Map.of("emb", "q8_0"), m.formats().get(4).overrides());
        assertEquals("sens", m.name());
    }

    @Test
    void badInputIsOneLineAndExitTwo() throws Exception {
        Path results = table();
        CliCapture bad = CliCapture.run("allocate", results.toString(), "--budgets", "4.5,lots");
        assertEquals(2, bad.exit());
        assertEquals("qlab: --budgets: \"lots\" is neither bits per weight (4.5) nor bytes with a unit (350000B, 1.5MiB)\n", bad.err());
        CliCapture zero = CliCapture.run("allocate", results.toString(), "--budgets", "0");
        assertEquals(2, zero.exit());
        assertEquals("qlab: --budgets: 0 bits per weight is outside (0, 64]\n", zero.err());
        Path empty = Files.createDirectories(dir.resolve("empty"));
        CliCapture none = CliCapture.run("allocate", empty.toString(), "--budgets", "4");
        assertEquals(2, none.exit());
        assertTrue(none.err().startsWith("qlab: " + empty + ": no sensitivity table"), none.err());
        CliCapture noFrom = CliCapture.run("allocate", results.toString(), "--budgets", "4", "--sweep-out", "x.yaml");
        assertEquals(2, noFrom.exit());
        assertEquals("qlab: --sweep-out x.yaml: needs --from, the sensitivity sweep file\n", noFrom.err());
        CliCapture badCompare = CliCapture.run("allocate", results.toString(), "--budgets", "4", "--sweep-out", "x.yaml",
                "--from", "s.yaml", "--compare", "q9_9");
        assertEquals(2, badCompare.exit());
        assertTrue(badCompare.err().startsWith("qlab: --compare: unknown format \"q9_9\""), badCompare.err());
        CliCapture noBudgets = CliCapture.run("allocate", results.toString());
        assertEquals(2, noBudgets.exit());
        assertEquals(1, noBudgets.err().lines().count(), noBudgets.err());
    }
}
