package qlab.quant;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import qlab.engine.QlabException;

/** Bytes per row against hand-written formulas, the stated bits per weight, the registry's errors. */
class FormatLayoutTest {
    private static final int[] WIDTHS = {8, 32, 64, 176, 896, 1023, 4864};

    static Stream<QuantFormat> formats() {
        return Formats.allVariants().stream();
    }

    private static long ceil(long a, long b) {
        return (a + b - 1) / b;
    }

    /** Each layout written out by hand from its class comment; codes cover the row padded to 32. */
    private static long expectedBytes(QuantFormat f, int cols) {
        long padded = ceil(cols, 32) * 32;
        int g = f.groupSize();
        return switch (f.name()) {
            case "f32" -> 4L * cols;
            case "f16", "bf16" -> 2L * cols;
            case "q8_0" -> 2 * ceil(cols, g) + padded;
            case "q4_0" -> 2 * ceil(cols, g) + padded / 2;
            case "q4_1" -> 4 * ceil(cols, 32) + padded / 2;
            case "q5_0" -> 2 * ceil(cols, 32) + padded / 2 + padded / 8;
            case "q5_1" -> 4 * ceil(cols, 32) + padded / 2 + padded / 8;
            case "q4_8" -> 4 + ceil(cols, 128) + padded / 2;
            case "q4_8g64" -> 4 + ceil(cols, 64) + padded / 2;
            case "q2_8", "tq2_8" -> 4 + ceil(cols, 128) + ceil(cols, 32) + padded / 4;
            case "b1_8" -> 4 + ceil(cols, 128) + ceil(cols, 32) + padded / 8;
            case "q2_0", "tq2_0" -> 2 * ceil(cols, g) + padded / 4;
            case "b1_0" -> 2 * ceil(cols, g) + padded / 8;
            case "int8" -> 4 + padded;
            case "int4" -> 4 * ceil(cols, g) + padded / 2;
            // ggml's blocks, the row padded to whole blocks
            case "q2_k" -> 84 * ceil(cols, 256);
            case "q3_k" -> 110 * ceil(cols, 256);
            case "q4_k" -> 144 * ceil(cols, 256);
            case "q5_k" -> 176 * ceil(cols, 256);
            case "q6_k" -> 210 * ceil(cols, 256);
            case "iq4_nl" -> 18 * ceil(cols, 32);
            case "iq4_xs" -> 136 * ceil(cols, 256);
            default -> throw new AssertionError("no hand formula for " + f.name() + ": add one");
        };
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("formats")
    void bytesPerRowMatchesHandFormula(QuantFormat f) {
        for (int cols : WIDTHS) {
            assertEquals(expectedBytes(f, cols), f.bytesPerRow(cols), f.label() + " width " + cols);
            assertEquals(expectedBytes(f, cols) * 8.0 / cols, f.bitsPerWeight(cols), 1e-12, f.label() + " width " + cols);
        }
    }

    @Test
    void statedBitsPerWeight() {
        // The figures the issue states; at 896 columns unless the format's block is the point.
        assertEquals(4.10, Formats.byName("q4_8").bitsPerWeight(896), 0.005);
        assertEquals(4.16, Formats.byName("q4_8g64").bitsPerWeight(896), 0.005);
        assertEquals(2.35, Formats.byName("q2_8").bitsPerWeight(896), 0.005);
        assertEquals(2.35, Formats.byName("tq2_8").bitsPerWeight(896), 0.005);
        assertEquals(1.35, Formats.byName("b1_8").bitsPerWeight(896), 0.005);
        assertEquals(8.5, Formats.byName("q8_0").bitsPerWeight(32 * 28), 1e-12);
        assertEquals(4.5, Formats.byName("q4_0").bitsPerWeight(896), 1e-12);
        assertEquals(2.5, Formats.byName("q2_0").bitsPerWeight(896), 1e-12);
        assertEquals(2.5, Formats.byName("tq2_0").bitsPerWeight(896), 1e-12);
        assertEquals(1.5, Formats.byName("b1_0").bitsPerWeight(896), 1e-12);
        assertEquals(16.0, Formats.byName("bf16").bitsPerWeight(896), 1e-12);
        // llama.cpp's figures, at a width of whole superblocks
        assertEquals(2.625, Formats.byName("q2_k").bitsPerWeight(768), 1e-12);
        assertEquals(3.4375, Formats.byName("q3_k").bitsPerWeight(768), 1e-12);
        assertEquals(4.5, Formats.byName("q4_k").bitsPerWeight(768), 1e-12);
        assertEquals(5.5, Formats.byName("q5_k").bitsPerWeight(768), 1e-12);
        assertEquals(6.5625, Formats.byName("q6_k").bitsPerWeight(768), 1e-12);
        assertEquals(4.5, Formats.byName("iq4_nl").bitsPerWeight(768), 1e-12);
        assertEquals(4.25, Formats.byName("iq4_xs").bitsPerWeight(768), 1e-12);
    }

    @Test
    void groupSizeReachesTheQuantizer() {
        float[] row = RowCases.gaussian(896, 3);
        row[5] = 9f; // one outlier: only the group holding it should get a large scale
        int multiGroup = 0;
        for (String name : Formats.names()) {
            List<Integer> groups = Formats.supportedGroupSizes(name);
            if (groups.size() < 2) {
                continue;
            }
            multiGroup++;
            float[][] decoded = new float[groups.size()][];
            byte[][] stored = new byte[groups.size()][];
            for (int i = 0; i < groups.size(); i++) {
                QuantFormat f = Formats.byName(name, groups.get(i));
                assertEquals(groups.get(i), f.groupSize());
                MemorySegment seg = RowCases.quantize(f, new float[][] {row}, 896, null, 0);
                stored[i] = seg.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
                decoded[i] = new float[896];
                f.dequantizeRow(seg, 0, 896, decoded[i], 0);
            }
            for (int i = 0; i < groups.size(); i++) {
                for (int k = i + 1; k < groups.size(); k++) {
                    assertFalse(Arrays.equals(stored[i], stored[k]), name + " groups " + groups.get(i) + " and " + groups.get(k) + " stored the same bytes");
                    assertFalse(Arrays.equals(decoded[i], decoded[k]), name + " groups " + groups.get(i) + " and " + groups.get(k) + " decode the same");
                }
            }
        }
        assertTrue(multiGroup >= 5, "q8_0, q4_0, q2_0, tq2_0, b1_0 and int4 take group sizes");
    }

    @Test
    void outlierOnlyCoarsensItsOwnGroup() {
        // With q8_0 at group g, values outside the outlier's group keep a fine step; inside it the
        // step is 9/127. Value 40 shares a group with value 5 at g = 64 and 128, not at 32.
        float[] row = RowCases.gaussian(896, 3);
        for (int j = 0; j < row.length; j++) {
            row[j] *= 0.01f;
        }
        row[5] = 9f;
        row[40] = 0.0312f;
        float[] back = new float[896];
        for (int g : new int[] {32, 64, 128}) {
            QuantFormat f = Formats.byName("q8_0", g);
            MemorySegment seg = RowCases.quantize(f, new float[][] {row}, 896, null, 0);
            f.dequantizeRow(seg, 0, 896, back, 0);
            double err = Math.abs(back[40] - row[40]);
            if (g == 32) {
                assertTrue(err < 0.001, "g32: value 40 is in a quiet group, error " + err);
            } else {
                assertTrue(err > 0.005, "g" + g + ": value 40 is in the outlier's group, error " + err);
            }
        }
    }

    @Test
    void registryErrorsNameTheValidChoices() {
        QlabException unknown = assertThrows(QlabException.class, () -> Formats.byName("q7_k"));
        assertTrue(unknown.getMessage().contains("\"q7_k\""), unknown.getMessage());
        for (String name : Formats.names()) {
            assertTrue(unknown.getMessage().contains(name), unknown.getMessage() + " should list " + name);
        }
        assertFalse(unknown.getMessage().contains("\n"));
        QlabException group = assertThrows(QlabException.class, () -> Formats.byName("q2_0", 64));
        assertEquals("format \"q2_0\": group size 64 is not supported (supported: 32, 128)", group.getMessage());
        assertEquals(List.of(32, 64, 128), Formats.supportedGroupSizes("q4_0"));
        assertEquals("q4_0/g64", Formats.byName("q4_0", 64).label());
        assertEquals("q4_0", Formats.byName("q4_0", 32).label());
        assertEquals(Formats.names().size(), Formats.all().size());
        assertEquals(java.util.Optional.of(group.getMessage()), Formats.whyUnsupported("q2_0", 64));
        assertEquals(java.util.Optional.empty(), Formats.whyUnsupported("q2_0", 128));
    }
}
