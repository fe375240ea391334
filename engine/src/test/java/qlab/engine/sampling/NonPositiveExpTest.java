package qlab.engine.sampling;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import org.junit.jupiter.api.Test;

class NonPositiveExpTest {

    @Test
    void agreesWithStrictMathWithinTwoUlp() {
        Random random = new Random(17);
        double worstUlps = 0;
        double worstAt = 0;
        for (int i = 0; i < 2_000_000; i++) {
            double x = switch (i % 4) {
                case 0 -> -random.nextDouble() * 745;
                case 1 -> -random.nextDouble() * 40;     // the range softmax weights live in
                case 2 -> -random.nextDouble() * 1e-6;   // next to the maximum
                default -> (double) (float) (-random.nextDouble() * 104); // float score differences
            };
            double expected = StrictMath.exp(x);
            double actual = NonPositiveExp.exp(x);
            double ulps = Math.abs(actual - expected) / Math.ulp(expected);
            if (ulps > worstUlps) {
                worstUlps = ulps;
                worstAt = x;
            }
        }
        System.out.printf("NonPositiveExp vs StrictMath.exp: max %.2f ulp (at x = %s) over 2e6 arguments%n",
                worstUlps, worstAt);
        assertTrue(worstUlps <= 2.0, "max error " + worstUlps + " ulp at " + worstAt);
    }

    @Test
    void edgeValues() {
        assertEquals(1.0, NonPositiveExp.exp(0.0));
        assertEquals(1.0, NonPositiveExp.exp(-0.0));
        assertEquals(0.0, NonPositiveExp.exp(Double.NEGATIVE_INFINITY));
        assertEquals(0.0, NonPositiveExp.exp(-800));
        assertEquals(StrictMath.exp(-745.0), NonPositiveExp.exp(-745.0)); // smallest subnormal
        assertEquals(StrictMath.exp(-1.0), NonPositiveExp.exp(-1.0), Math.ulp(StrictMath.exp(-1.0)));
        // Subnormal results keep their few bits.
        for (double x = -708.0; x > -745.0; x -= 0.37) {
            double expected = StrictMath.exp(x);
            assertEquals(expected, NonPositiveExp.exp(x), 2 * Math.ulp(expected), "x = " + x);
        }
    }
}
