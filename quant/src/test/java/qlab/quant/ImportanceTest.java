package qlab.quant;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import qlab.quant.format.BlockCodeFormat;

/**
 * With an importance vector (a few input channels whose activations are 10× larger, so errors there
 * cost 100×), the importance-weighted quantizer must give a lower weighted squared error than the
 * plain one, for every 5-, 4-, 2- and 1-bit format.
 */
class ImportanceTest {
    private static final int ROWS = 16;
    private static final int COLS = 896;

    static Stream<QuantFormat> lowBitFormats() {
        return Formats.allVariants().stream()
                .filter(f -> f instanceof BlockCodeFormat b && b.grid().bits <= 5);
    }

    private static double weightedError(QuantFormat f, float[][] rows, float[] importance, float[] quantizeWith) {
        MemorySegment data = RowCases.quantize(f, rows, COLS, quantizeWith, 0);
        float[] back = new float[COLS];
        double e = 0;
        for (int r = 0; r < ROWS; r++) {
            f.dequantizeRow(data, r * f.bytesPerRow(COLS), COLS, back, 0);
            for (int j = 0; j < COLS; j++) {
                double d = rows[r][j] - back[j];
                e += importance[j] * d * d;
            }
        }
        return e;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("lowBitFormats")
    void importanceLowersWeightedError(QuantFormat f) {
        Random rnd = new Random(11);
        float[] importance = new float[COLS];
        for (int j = 0; j < COLS; j++) {
            importance[j] = rnd.nextInt(20) == 0 ? 100f : 1f; // ~5% outlier channels
        }
        float[][] rows = new float[ROWS][];
        for (int r = 0; r < ROWS; r++) {
            rows[r] = RowCases.gaussian(COLS, 500 + r);
        }
        double plain = weightedError(f, rows, importance, null);
        double weighted = weightedError(f, rows, importance, importance);
        System.out.printf("importance %-12s weighted error plain %.2f, with importance %.2f (%.1f%% lower)%n",
                f.label(), plain, weighted, 100 * (1 - weighted / plain));
        assertTrue(weighted < plain, f.label() + ": weighted error " + weighted + " not below plain " + plain);
    }
}
