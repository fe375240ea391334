package qlab.quant;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * quantize → dequantize relative RMS error, sqrt(Σ(x − x̂)² / Σx²), on 64 Gaussian rows of 896
 * (the model's hidden width). The bands were pinned around values measured with this code
 * (listed beside each); a registered format without a band fails until it gets one.
 */
class RoundTripErrorTest {
    private static final int ROWS = 64;
    private static final int COLS = 896;

    /** label → {low, high} relative RMS error. */
    private static final Map<String, double[]> BANDS = Map.ofEntries(
            Map.entry("f32", new double[] {0.0, 0.0}), // measured 0.00000
            Map.entry("f16", new double[] {0.0002, 0.00022}), // measured 0.00021
            Map.entry("bf16", new double[] {0.00157, 0.00173}), // measured 0.00165
            Map.entry("q8_0", new double[] {0.00507, 0.00561}), // measured 0.00534
            Map.entry("q8_0/g64", new double[] {0.00561, 0.00621}), // measured 0.00591
            Map.entry("q8_0/g128", new double[] {0.00611, 0.00675}), // measured 0.00643
            Map.entry("q4_0", new double[] {0.0814, 0.09}), // measured 0.08568
            Map.entry("q4_0/g64", new double[] {0.0899, 0.0994}), // measured 0.09463
            Map.entry("q4_0/g128", new double[] {0.0973, 0.1075}), // measured 0.10239
            Map.entry("q4_1", new double[] {0.0744, 0.0822}), // measured 0.07829
            Map.entry("q5_0", new double[] {0.0405, 0.0448}), // measured 0.04267
            Map.entry("q5_1", new double[] {0.036, 0.0398}), // measured 0.03792
            Map.entry("q4_8", new double[] {0.106, 0.1171}), // measured 0.11153
            Map.entry("q4_8g64", new double[] {0.0972, 0.1074}), // measured 0.10232
            Map.entry("q2_8", new double[] {0.3116, 0.3444}), // measured 0.32803
            Map.entry("tq2_8", new double[] {0.4001, 0.4422}), // measured 0.42111
            Map.entry("b1_8", new double[] {0.5644, 0.6238}), // measured 0.59407
            Map.entry("q2_0", new double[] {0.3116, 0.3444}), // measured 0.32803
            Map.entry("q2_0/g128", new double[] {0.3232, 0.3572}), // measured 0.34018
            Map.entry("tq2_0", new double[] {0.4001, 0.4422}), // measured 0.42111
            Map.entry("tq2_0/g128", new double[] {0.4105, 0.4537}), // measured 0.43211
            Map.entry("b1_0", new double[] {0.5644, 0.6238}), // measured 0.59407
            Map.entry("b1_0/g128", new double[] {0.5712, 0.6313}), // measured 0.60123
            Map.entry("int8", new double[] {0.00732, 0.0081}), // measured 0.00771
            Map.entry("int4", new double[] {0.1108, 0.1225}), // measured 0.11664
            Map.entry("int4/g32", new double[] {0.0919, 0.1015}), // measured 0.09671
            Map.entry("int4/g64", new double[] {0.1022, 0.1129}), // measured 0.10754
            Map.entry("q2_k", new double[] {0.2812, 0.3108}), // measured 0.29604
            Map.entry("q3_k", new double[] {0.1431, 0.1582}), // measured 0.15067
            Map.entry("q4_k", new double[] {0.0678, 0.0749}), // measured 0.07137
            Map.entry("q5_k", new double[] {0.0343, 0.0379}), // measured 0.03612
            Map.entry("q6_k", new double[] {0.0169, 0.0187}), // measured 0.01778
            Map.entry("iq4_nl", new double[] {0.0722, 0.0798}), // measured 0.07598
            Map.entry("iq4_xs", new double[] {0.0728, 0.0804})); // measured 0.07660

    static Stream<QuantFormat> formats() {
        return Formats.allVariants().stream();
    }

    static double relativeRmsError(QuantFormat format, long seed) {
        float[][] rows = new float[ROWS][];
        for (int r = 0; r < ROWS; r++) {
            rows[r] = RowCases.gaussian(COLS, seed + r);
        }
        MemorySegment data = RowCases.quantize(format, rows, COLS, null, 0);
        float[] back = new float[COLS];
        double err = 0;
        double ref = 0;
        for (int r = 0; r < ROWS; r++) {
            format.dequantizeRow(data, r * format.bytesPerRow(COLS), COLS, back, 0);
            for (int j = 0; j < COLS; j++) {
                double d = rows[r][j] - back[j];
                err += d * d;
                ref += (double) rows[r][j] * rows[r][j];
            }
        }
        return Math.sqrt(err / ref);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("formats")
    void errorWithinBand(QuantFormat format) {
        double e = relativeRmsError(format, 42);
        System.out.printf("round trip %-12s %.3f bpw  relative RMS error %.6f%n", format.label(), format.bitsPerWeight(COLS), e);
        double[] band = BANDS.get(format.label());
        assertNotNull(band, format.label() + " has no error band; measured " + e);
        assertTrue(e >= band[0] && e <= band[1], format.label() + ": relative RMS error " + e + " outside [" + band[0] + ", " + band[1] + "]");
    }
}
