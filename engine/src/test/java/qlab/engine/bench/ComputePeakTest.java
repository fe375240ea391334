package qlab.engine.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import jdk.incubator.vector.FloatVector;
import org.junit.jupiter.api.Test;
import qlab.engine.util.WorkerPool;

/** The peak loop computes what it claims to, so its count of multiply-adds is the work done. */
class ComputePeakTest {

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
        assertEquals(expected * lanes, ComputePeak.fmaChains(steps, 2f), 1e-3f * lanes);
    }

    @Test
    void measureReportsOrderedRatesForThePoolsThreads() {
        try (WorkerPool pool = new WorkerPool(2)) {
            ComputePeak.Result r = ComputePeak.measure(pool, 3);
            assertEquals(2, r.threads());
            assertTrue(r.minGmacs() > 0 && r.minGmacs() <= r.medianGmacs() && r.medianGmacs() <= r.maxGmacs(), r.toString());
        }
    }
}
