package qlab.engine.eval;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The vector log-sum-exp against the scalar reference, and both against closed forms. */
class LogSumExpTest {

    private static void agree(float[] logits, int offset, int n) {
        double s = LogSumExp.scalar(logits, offset, n);
        double v = LogSumExp.vector(logits, offset, n);
        if (Double.isNaN(s) || Double.isInfinite(s)) {
            assertEquals(s, v, "n=" + n);
        } else {
            assertEquals(s, v, 1e-12 * Math.max(1, Math.abs(s)), "n=" + n + " offset=" + offset);
        }
    }

    /**
     * The vector exponential is bitwise its scalar twin (so the result cannot depend on whether
     * the JIT has compiled the caller), and within 4 ulp of Math.exp over the range a shifted
     * logit takes.
     */
    @Test
    void exponentialMatchesItsScalarTwinBitwiseAndMathExp() {
        SplittableRandom r = new SplittableRandom(11);
        int w = jdk.incubator.vector.DoubleVector.SPECIES_PREFERRED.length();
        double[] x = new double[w];
        double[] out = new double[w];
        for (int round = 0; round < 20_000; round++) {
            for (int l = 0; l < w; l++) {
                x[l] = switch (round % 4) {
                    case 0 -> -r.nextDouble() * 750;
                    case 1 -> -r.nextDouble() * 2;
                    case 2 -> (r.nextDouble() - 0.5) * 1400;
                    default -> -Math.ulp(1.0) * r.nextInt(100);
                };
            }
            LogSumExp.exp(jdk.incubator.vector.DoubleVector.fromArray(jdk.incubator.vector.DoubleVector.SPECIES_PREFERRED, x, 0))
                    .intoArray(out, 0);
            for (int l = 0; l < w; l++) {
                double twin = LogSumExp.exp(x[l]);
                assertEquals(Double.doubleToRawLongBits(twin), Double.doubleToRawLongBits(out[l]), "x=" + x[l]);
                if (x[l] >= -708 && x[l] <= 709) {
                    double e = Math.exp(x[l]);
                    assertTrue(Math.abs(out[l] - e) <= 4 * Math.ulp(e), "x=" + x[l] + ": " + out[l] + " vs " + e);
                }
            }
        }
    }

    @Test
    void vectorAgreesWithScalarOnRandomRowsOfEveryLength() {
        SplittableRandom r = new SplittableRandom(7);
        for (int n : new int[] {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 1000, 4099, 151_936}) {
            for (int offset : new int[] {0, 3}) {
                float[] logits = new float[offset + n + 5];
                for (int i = 0; i < logits.length; i++) {
                    logits[i] = (float) (r.nextGaussian() * 6 - 2);
                }
                agree(logits, offset, n);
            }
        }
    }

    @Test
    void adversarialRows() {
        int n = 1037;
        float[] spike = new float[n];
        Arrays.fill(spike, -30f);
        spike[n - 1] = 80f;                       // one logit dominating, in the scalar tail
        agree(spike, 0, n);
        float[] big = new float[n];
        Arrays.fill(big, 3e38f);                  // near the float maximum: the shift keeps exp finite
        agree(big, 0, n);
        float[] withMinusInf = new float[n];
        Arrays.fill(withMinusInf, 1.5f);
        withMinusInf[10] = Float.NEGATIVE_INFINITY;
        agree(withMinusInf, 0, n);
        float[] allMinusInf = new float[n];
        Arrays.fill(allMinusInf, Float.NEGATIVE_INFINITY);
        agree(allMinusInf, 0, n);
        float[] withNaN = new float[n];
        withNaN[500] = Float.NaN;
        assertTrue(Double.isNaN(LogSumExp.vector(withNaN, 0, n)));
        float[] withInf = new float[n];
        withInf[3] = Float.POSITIVE_INFINITY;
        agree(withInf, 0, n);
        agree(new float[4], 0, 0);                // empty: log 0
    }

    @Test
    void closedForms() {
        for (int n : new int[] {1, 9, 151_936}) {
            float[] same = new float[n];
            Arrays.fill(same, 2.25f);
            assertEquals(2.25 + Math.log(n), LogSumExp.vector(same, 0, n), 1e-12);
            assertEquals(2.25 + Math.log(n), LogSumExp.scalar(same, 0, n), 1e-12);
        }
        float[] two = {0f, (float) Math.log(3)};  // log(1 + 3)
        assertEquals(Math.log(4), LogSumExp.vector(two, 0, 2), 1e-7);
    }
}
