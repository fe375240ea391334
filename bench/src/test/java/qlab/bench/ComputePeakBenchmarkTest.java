package qlab.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import jdk.incubator.vector.ShortVector;
import org.junit.jupiter.api.Test;

/** The 16-bit peak loop computes what it claims to, so its count of multiply-adds is the work done. */
class ComputePeakBenchmarkTest {

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
