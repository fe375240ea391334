package qlab.engine.util;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * A persistent pool of threads for the forward pass. One decode step dispatches a few hundred
 * small jobs (one per matrix product), so the hand-off must cost microseconds: workers spin on a
 * generation counter for a short while, then park. Spinning forever would collapse when another
 * busy process shares the cores, so spinning is bounded. The calling thread is worker 0.
 */
public final class WorkerPool implements AutoCloseable {

    /** A job over an index range, run by one worker: [start, end). */
    @FunctionalInterface
    public interface RangeTask {
        void run(int start, int end);
    }

    /** How long an idle worker spins before parking (-Dqlab.pool.spinMicros; a park/unpark round trip costs tens of microseconds on a VM). */
    private static final long SPIN_NANOS = Long.getLong("qlab.pool.spinMicros", 100) * 1000;

    private final int threads;
    private final Thread[] workers;
    private final boolean[] sleeping;
    private final AtomicInteger remaining = new AtomicInteger();
    private final AtomicInteger nextChunk = new AtomicInteger();
    /**
     * Chunks per thread of a range (-Dqlab.pool.chunksPerThread). q4_0 on the 0.5B shapes, 2 threads,
     * {@code bench --reps 5}, six alternating pairs on this shared 2-core VM, 1 vs 4: decode median of
     * medians 19.6 vs 22.7 tok/s (4 won 4 pairs of 6), 64-token prefill 121 vs 133.
     */
    private static final int CHUNKS_PER_THREAD = Integer.getInteger("qlab.pool.chunksPerThread", 4);
    /** Set as the next chunk once a chunk has failed, so no thread takes another. */
    private static final int NO_MORE_CHUNKS = Integer.MAX_VALUE / 2;
    private volatile int generation;
    private volatile boolean closed;
    private volatile RangeTask task;
    private volatile int taskSize;
    private volatile int taskGrain;
    private volatile Throwable failure;

    public WorkerPool(int threads) {
        if (threads < 1) {
            throw new IllegalArgumentException("threads must be >= 1, got " + threads);
        }
        this.threads = threads;
        this.workers = new Thread[threads];
        this.sleeping = new boolean[threads];
        for (int i = 1; i < threads; i++) {
            int id = i;
            Thread t = new Thread(() -> workerLoop(id), "qlab-worker-" + i);
            t.setDaemon(true);
            workers[i] = t;
            t.start();
        }
    }

    public int threads() {
        return threads;
    }

    /**
     * Splits [0, size) into chunks (boundaries on multiples of {@code grain}; see {@link #runChunks})
     * and runs them in parallel; returns when all are done. An exception thrown by a chunk stops
     * the others from taking more and is rethrown here once every thread has left the job (this
     * thread's own if its chunk failed, else a worker's).
     */
    public void forRange(int size, int grain, RangeTask job) {
        if (size <= 0) {
            return;
        }
        if (threads == 1 || size <= grain) {
            job.run(0, size);
            return;
        }
        task = job;
        taskSize = size;
        taskGrain = grain;
        failure = null;
        nextChunk.set(0);
        remaining.set(threads - 1);
        generation++; // publishes task, size, grain
        for (int i = 1; i < threads; i++) {
            if (sleepingVolatile(i)) {
                LockSupport.unpark(workers[i]);
            }
        }
        Throwable mine = null;
        try {
            runChunks(job, size, grain);
        } catch (Throwable t) {
            mine = t;
            nextChunk.set(NO_MORE_CHUNKS);
        }
        // Wait for the workers even when this thread's chunk failed: a worker still inside this job
        // would otherwise take chunks, count down and report its failure in the next one.
        long spinUntil = System.nanoTime() + SPIN_NANOS;
        while (remaining.get() != 0) {
            if (System.nanoTime() < spinUntil) {
                Thread.onSpinWait();
            } else {
                Thread.yield();
            }
        }
        task = null;
        Throwable f = mine != null ? mine : failure;
        if (f != null) {
            if (f instanceof RuntimeException re) {
                throw re;
            }
            if (f instanceof Error e) {
                throw e;
            }
            throw new RuntimeException(f);
        }
    }

    /** Runs job(i) for i in [0, n) spread over the threads. */
    public void forEach(int n, java.util.function.IntConsumer job) {
        forRange(n, 1, (s, e) -> {
            for (int i = s; i < e; i++) {
                job.accept(i);
            }
        });
    }

    /**
     * Takes chunks of the range until none is left: threads × {@link #CHUNKS_PER_THREAD} chunks,
     * boundaries on multiples of grain, handed out in order to whichever thread asks next. A
     * thread that wakes late or is descheduled by the host leaves its share to the others.
     */
    private void runChunks(RangeTask job, int size, int grain) {
        int units = (size + grain - 1) / grain;
        int chunks = Math.min(units, threads * CHUNKS_PER_THREAD);
        for (int c; (c = nextChunk.getAndIncrement()) < chunks; ) {
            int start = Math.min(size, (int) ((long) units * c / chunks) * grain);
            int end = Math.min(size, (int) ((long) units * (c + 1) / chunks) * grain);
            if (start < end) {
                job.run(start, end);
            }
        }
    }

    private static final java.lang.invoke.VarHandle SLEEPING =
            java.lang.invoke.MethodHandles.arrayElementVarHandle(boolean[].class);

    private boolean sleepingVolatile(int i) {
        return (boolean) SLEEPING.getVolatile(sleeping, i);
    }

    private void workerLoop(int id) {
        int seen = 0;
        while (true) {
            long spinUntil = System.nanoTime() + SPIN_NANOS;
            while (generation == seen && !closed) {
                if (System.nanoTime() < spinUntil) {
                    Thread.onSpinWait();
                } else {
                    SLEEPING.setVolatile(sleeping, id, true);
                    if (generation == seen && !closed) {
                        LockSupport.park(this);
                    }
                    SLEEPING.setVolatile(sleeping, id, false);
                }
            }
            if (closed) {
                return;
            }
            seen = generation;
            try {
                runChunks(task, taskSize, taskGrain);
            } catch (Throwable t) {
                failure = t;
                nextChunk.set(NO_MORE_CHUNKS); // the others stop at their next chunk
            } finally {
                remaining.decrementAndGet();
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        for (int i = 1; i < threads; i++) {
            LockSupport.unpark(workers[i]);
        }
    }
}
