package qlab.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.ShortVector;
import org.junit.jupiter.api.Test;

/** The peak loops compute what they claim to, so their counts of multiply-adds are the work done. */
class ComputePeakBenchmarkTest {

    @Test
    void fmaChainsAccumulateXTimesYIntoEveryChain() {
        int steps = 5;
        float expected = 0;
        for (int c = 0; c < 12; c++) {
            float a = 2f + c;
            for (int i = 0; i < steps; i++) {
                a = Math.fma(0.5f, 0.001f, a);
            }
            expected += a;
        }
        float lanes = FloatVector.SPECIES_PREFERRED.length();
        assertEquals(expected * lanes, ComputePeakBenchmark.fmaChains(steps, 2f), 1e-3f * lanes);
    }

    @Test
    void mulAddChainsWrapIn16Bits() {
        int steps = 7;
        short expected = 0;
        for (int c = 0; c < 12; c++) {
            short a = (short) (3 + c);
            for (int i = 0; i < steps; i++) {
                a = (short) (a * 3 + 5);
            }
            expected += a;
        }
        short lanes = (short) ShortVector.SPECIES_PREFERRED.length();
        assertEquals((short) (expected * lanes), ComputePeakBenchmark.mulAddChains(steps, (short) 3));
    }
}
