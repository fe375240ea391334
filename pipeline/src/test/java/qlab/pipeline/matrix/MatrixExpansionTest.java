package qlab.pipeline.matrix;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import qlab.pipeline.SweepFiles;

class MatrixExpansionTest {

    @TempDir
    Path dir;

    private MatrixExpansion expand(String yaml) throws IOException {
        return MatrixExpansion.expand(SweepFileParser.parse(SweepFiles.write(dir, "s.yaml", yaml)));
    }

    @Test
    void crossProductWithCanonicalDedup() throws IOException {
        MatrixExpansion e = expand(SweepFiles.MATRIX);
        // 5 formats x 2 groups x 2 imatrices x 2 threads = 40 combinations. f32 takes neither a group
        // size nor an importance matrix: its 8 combinations are 2 configs (one per thread count).
        assertEquals(34, e.configs().size());
        assertEquals(6, e.duplicates());
        Map<String, Long> perFormat = e.configs().stream()
                .collect(Collectors.groupingBy(c -> c.quant().mixName(), Collectors.counting()));
        assertEquals(Map.of("f32", 2L, "q8_0", 8L, "q4_0", 8L, "q4_8", 8L, "q4_8+attn=q8_0", 8L), perFormat);
        SweepConfig f32 = e.configs().get(0);
        assertNull(f32.quant().groupSize());
        assertNull(f32.calibration());
        assertEquals(34, e.configs().stream().map(SweepConfig::configId).distinct().count());
    }

    @Test
    void llamaNamedTypesAreFormatsWithoutAGroupSize() throws IOException {
        MatrixExpansion e = expand(SweepFiles.MATRIX.replace("  - q4_0\n", "  - Q4_K_M\n"));
        List<SweepConfig> named = e.configs().stream().filter(c -> c.quant().format().equals("Q4_K_M")).toList();
        // one per importance matrix and thread count: the group sizes do not apply
        assertEquals(4, named.size());
        for (SweepConfig c : named) {
            assertNull(c.quant().groupSize());
            assertTrue(!c.skipped(), c.skipReason());
        }
    }

    @Test
    void impossibleGroupSizesAreSkippedWithTheirReason() throws IOException {
        MatrixExpansion e = expand(SweepFiles.MATRIX);
        List<SweepConfig> skipped = e.configs().stream().filter(SweepConfig::skipped).toList();
        assertEquals(8, skipped.size());
        assertEquals(26, e.runnable());
        for (SweepConfig c : skipped) {
            assertEquals(32, c.quant().groupSize());
            assertEquals("q4_8", c.quant().format());
            assertEquals("q4_8 supports group size 128 only, not 32", c.skipReason());
        }
    }

    @Test
    void anOverrideFormatThatCannotTakeTheGroupSizeIsNamed() throws IOException {
        MatrixExpansion e = expand(SweepFiles.MATRIX
                .replace("  - f32\n  - q8_0\n  - q4_0\n  - q4_8\n  - q4_8+attn=q8_0\n", "  - q4_0+mlp=q2_8\n  - f16+attn=q4_0\n")
                .replace("[32, 128]", "[64]"));
        assertEquals("override mlp=q2_8 supports group size 128 only, not 64", e.configs().get(0).skipReason());
        SweepConfig f16 = e.configs().stream().filter(c -> c.quant().format().equals("f16")).findFirst().orElseThrow();
        // A per-row base with a grouped override takes the group size, and the importance matrix.
        assertNull(f16.skipReason());
        assertEquals(64, f16.quant().groupSize());
    }

    @Test
    void skipReasonListsAllSupportedSizes() throws IOException {
        MatrixExpansion e = expand(SweepFiles.MATRIX.replace("[32, 128]", "[48]"));
        SweepConfig q8 = e.configs().stream().filter(c -> c.quant().mixName().equals("q8_0")).findFirst().orElseThrow();
        assertEquals("q8_0 supports group size 32, 64 or 128, not 48", q8.skipReason());
    }

    @Test
    void configIdsAreStableAndDependOnContentNotLocation() throws IOException {
        List<String> first = ids(expand(SweepFiles.MATRIX));
        assertEquals(first, ids(expand(SweepFiles.MATRIX)));

        Path other = dir.resolve("elsewhere");
        List<String> moved = ids(MatrixExpansion.expand(
                SweepFileParser.parse(SweepFiles.write(other, "s.yaml", SweepFiles.MATRIX))));
        assertEquals(first, moved);

        Files.writeString(other.resolve("eval.txt"), "a different evaluation text");
        List<String> changed = ids(MatrixExpansion.expand(SweepFileParser.parse(other.resolve("s.yaml"))));
        for (int i = 0; i < first.size(); i++) {
            assertNotEquals(first.get(i), changed.get(i));
        }
    }

    @Test
    void activationsCrossIntegerMixesAndCollapseForFloatOnes() throws IOException {
        MatrixExpansion e = expand(SweepFiles.MATRIX.replace("imatrix: [none, cal]\n",
                "imatrix: [none, cal]\nactivations: [f32, int8]\n"));
        // 80 combinations. f32 has no int8 path, so its 16 are the 2 configs (one per thread count)
        // they were without the axis; each of the 4 integer mixes has 16 configs instead of 8.
        assertEquals(66, e.configs().size());
        assertEquals(14, e.duplicates());
        assertEquals(16, e.configs().stream().filter(SweepConfig::skipped).count());
        Map<String, Long> perFormat = e.configs().stream()
                .collect(Collectors.groupingBy(c -> c.quant().mixName(), Collectors.counting()));
        assertEquals(Map.of("f32", 2L, "q8_0", 16L, "q4_0", 16L, "q4_8", 16L, "q4_8+attn=q8_0", 16L), perFormat);
        List<SweepConfig> int8 = e.configs().stream().filter(c -> c.activations() == Activations.INT8).toList();
        assertEquals(32, int8.size());
        assertTrue(int8.stream().noneMatch(c -> c.quant().format().equals("f32")));
        assertTrue(int8.stream().allMatch(c -> c.label().endsWith(" int8")), "int8 configs say so in their label");

        // The f32 configs are exactly those of the file without the axis, ids included.
        List<String> f32 = e.configs().stream().filter(c -> c.activations() == Activations.F32)
                .map(SweepConfig::configId).toList();
        assertEquals(ids(expand(SweepFiles.MATRIX)), f32);
        assertEquals(66, e.configs().stream().map(SweepConfig::configId).distinct().count());
    }

    @Test
    void aFloatBaseWithAnIntegerOverrideHasAnInt8Path() throws IOException {
        MatrixExpansion e = expand(SweepFiles.MATRIX
                .replace("  - f32\n  - q8_0\n  - q4_0\n  - q4_8\n  - q4_8+attn=q8_0\n", "  - f16\n  - f16+attn=q4_0\n")
                .replace("[32, 128]", "[32]").replace("threads: [1, 2]", "threads: [1]")
                .replace("imatrix: [none, cal]\n", "imatrix: [none]\nactivations: [int8]\n"));
        assertEquals(2, e.configs().size());
        assertEquals(0, e.duplicates());
        assertEquals(Activations.F32, e.configs().get(0).activations(), "f16 alone: f32 activations whatever is asked");
        assertEquals("f16 t1", e.configs().get(0).label());
        assertEquals(Activations.INT8, e.configs().get(1).activations());
        assertEquals("f16/32+attn=q4_0 t1 int8", e.configs().get(1).label());
    }

    @Test
    void f32ConfigsKeepTheIdsTheyHadBeforeTheActivationsAxis() throws IOException {
        // Computed by the code before the axis existed: results and caches of earlier sweeps stay valid.
        for (String yaml : List.of(SweepFiles.MATRIX, SweepFiles.MATRIX.replace("imatrix: [none, cal]\n",
                "imatrix: [none, cal]\nactivations: [f32, int8]\n"))) {
            Map<String, String> byLabel = expand(yaml).configs().stream()
                    .collect(Collectors.toMap(SweepConfig::label, SweepConfig::configId));
            assertEquals("0bf8d76a43d34d2d", byLabel.get("f32 t1"));
            assertEquals("6154d0aae79b621d", byLabel.get("q8_0/32 imx=cal t1"));
            assertEquals("8c9b2ec2c4d900ed", byLabel.get("q4_8/128+attn=q8_0 imx=cal t2"));
        }
    }

    @Test
    void listingAnAxisValueTwiceAddsNothing() throws IOException {
        MatrixExpansion e = expand(SweepFiles.MATRIX.replace("threads: [1, 2]", "threads: [1, 2, 1]")
                .replace("  - q4_0\n", "  - q4_0\n  - {base: q4_0}\n"));
        assertEquals(34, e.configs().size());
    }

    private static List<String> ids(MatrixExpansion e) {
        return e.configs().stream().map(SweepConfig::configId).toList();
    }
}
