package qlab.engine.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Test;
import qlab.engine.util.WorkerPool;

class WorkerPoolTest {

    @Test
    void everyIndexRunsExactlyOnceOnChunkBoundariesOfTheGrain() {
        for (int threads = 1; threads <= 3; threads++) {
            try (WorkerPool pool = new WorkerPool(threads)) {
                for (int size : new int[] {1, 2, 15, 16, 17, 1000, 4864}) {
                    for (int grain : new int[] {1, 4, 16}) {
                        AtomicIntegerArray seen = new AtomicIntegerArray(size);
                        int g = grain;
                        for (int rep = 0; rep < 50; rep++) {
                            pool.forRange(size, grain, (s, e) -> {
                                if (s % g != 0) {
                                    throw new AssertionError("chunk start " + s + " not on grain " + g);
                                }
                                for (int i = s; i < e; i++) {
                                    seen.incrementAndGet(i);
                                }
                            });
                        }
                        for (int i = 0; i < size; i++) {
                            assertEquals(50, seen.get(i), "index " + i + " size " + size + " threads " + pool.threads());
                        }
                    }
                }
            }
        }
    }

    @Test
    void aWorkersExceptionReachesTheCaller() {
        try (WorkerPool pool = new WorkerPool(2)) {
            IllegalStateException e = assertThrows(IllegalStateException.class,
                    () -> pool.forRange(100, 1, (s, end) -> {
                        if (s > 0) {
                            throw new IllegalStateException("boom in worker");
                        }
                    }));
            assertEquals("boom in worker", e.getMessage());
            // and the pool still works afterwards
            AtomicIntegerArray seen = new AtomicIntegerArray(10);
            pool.forEach(10, seen::incrementAndGet);
            for (int i = 0; i < 10; i++) {
                assertEquals(1, seen.get(i));
            }
        }
    }

    @Test
    void aFailedRangeWaitsForItsWorkersBeforeTheNextOneStarts() {
        // The calling thread's chunk fails at once, the worker's 5 ms later: the failed call must wait
        // for it, so the next call neither sees that late failure nor loses chunks to the old job.
        try (WorkerPool pool = new WorkerPool(2)) {
            for (int rep = 0; rep < 20; rep++) {
                IllegalStateException e = assertThrows(IllegalStateException.class, () -> pool.forRange(8, 1, (s, end) -> {
                    if (Thread.currentThread().getName().startsWith("qlab-worker")) {
                        try {
                            Thread.sleep(5);
                        } catch (InterruptedException ie) {
                            Thread.currentThread().interrupt();
                        }
                        throw new IllegalStateException("late");
                    }
                    throw new IllegalStateException("early");
                }));
                assertTrue(e.getMessage().equals("early") || e.getMessage().equals("late"), e.getMessage());
                AtomicIntegerArray seen = new AtomicIntegerArray(1000);
                pool.forEach(1000, seen::incrementAndGet);
                for (int i = 0; i < 1000; i++) {
                    assertEquals(1, seen.get(i), "index " + i + " after failed call " + rep);
                }
            }
        }
    }
}
