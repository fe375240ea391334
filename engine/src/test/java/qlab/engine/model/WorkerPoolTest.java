package qlab.engine.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

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
}
