package qlab.quant;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;
import qlab.quant.kernel.CodeGrid;

/** The least-squares starting scales in {@link CodeGrid} are the MSE-optimal ones for a unit Gaussian. */
class GaussianScaleTest {

    private static double bestScale(CodeGrid grid, double lo, double hi) {
        float[] x = RowCases.gaussian(200_000, 7);
        double best = lo;
        double bestError = Double.MAX_VALUE;
        for (double d = lo; d <= hi; d += 0.0005) {
            double e = 0;
            for (float v : x) {
                double r = v - d * grid.nearestLevel((float) (v / d));
                e += r * r;
            }
            if (e < bestError) {
                bestError = e;
                best = d;
            }
        }
        return best;
    }

    @Test
    void twoBitGridConstant() {
        // 200k samples locate the flat optimum to well under 1%.
        assertEquals(CodeGrid.Q2.gaussianScale, bestScale(CodeGrid.Q2, 0.40, 0.60), 0.005);
    }

    @Test
    void ternaryGridConstant() {
        assertEquals(CodeGrid.TERNARY.gaussianScale, bestScale(CodeGrid.TERNARY, 1.0, 1.45), 0.012);
    }
}
