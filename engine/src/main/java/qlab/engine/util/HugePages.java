package qlab.engine.util;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Off-heap memory for weights that decode streams from DRAM, backed by 2 MiB pages where the
 * kernel gives them.
 *
 * <p>Why: the cores' stream prefetchers stop at every 4 KiB page boundary, so a kernel that reads
 * its weights once per token at its own pace waits for memory at each new page. On a kernel with
 * transparent huge pages in {@code madvise} mode (the default of many distributions, and of the
 * machines these numbers come from) only regions that ask for them get 2 MiB pages, and {@link
 * Arena#allocate} does not ask. So: an anonymous {@code mmap}, aligned to 2 MiB, {@code
 * madvise(MADV_HUGEPAGE)} before the first touch, {@code munmap} once the segment is unreachable.
 * Anywhere that is not Linux on x86-64 or arm64, where native access is refused, below {@link #MIN_BYTES}, or with
 * {@code -Dqlab.hugePages=false}, it is an ordinary automatic-arena allocation. Either way the
 * memory is zeroed and at least 64-byte aligned.
 */
public final class HugePages {
    /** Smaller requests are ordinary allocations: a 2 MiB page would be mostly empty. */
    public static final long MIN_BYTES = 1L << 20;

    private static final long PAGE = 2L << 20;
    private static final int PROT_READ_WRITE = 0x1 | 0x2;
    private static final int MAP_PRIVATE_ANONYMOUS = 0x02 | 0x20;
    private static final int MADV_HUGEPAGE = 14;

    private static final MethodHandle MMAP;
    private static final MethodHandle MADVISE;
    private static final MethodHandle MUNMAP;
    /** Bytes mapped and not yet unmapped. */
    private static final AtomicLong MAPPED = new AtomicLong();
    /**
     * Past this many mapped bytes an allocation first collects garbage, so mappings nothing refers
     * to any more are returned before new ones are made: the garbage collector sees only the small
     * segment objects, not the memory behind them (a sweep loads model after model). The JDK does
     * the same for its own off-heap allocations, with the same default limit: the maximum heap.
     */
    private static volatile long limit = Runtime.getRuntime().maxMemory();

    static {
        MethodHandle mmap = null;
        MethodHandle madvise = null;
        MethodHandle munmap = null;
        String arch = System.getProperty("os.arch", "");
        // The flag values below are Linux's on x86-64 and arm64 (other architectures number some differently).
        if (System.getProperty("os.name", "").startsWith("Linux") && (arch.equals("amd64") || arch.equals("aarch64"))
                && !"false".equals(System.getProperty("qlab.hugePages"))) {
            try {
                Linker linker = Linker.nativeLinker();
                var libc = linker.defaultLookup();
                mmap = linker.downcallHandle(libc.find("mmap").orElseThrow(), FunctionDescriptor.of(ValueLayout.ADDRESS,
                        ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT,
                        ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG));
                madvise = linker.downcallHandle(libc.find("madvise").orElseThrow(), FunctionDescriptor.of(
                        ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT));
                munmap = linker.downcallHandle(libc.find("munmap").orElseThrow(), FunctionDescriptor.of(
                        ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG));
            } catch (RuntimeException | LinkageError e) {
                // No native access (a launcher without --enable-native-access that denies it): plain allocations.
                mmap = null;
            }
        }
        MMAP = mmap;
        MADVISE = madvise;
        MUNMAP = munmap;
    }

    private HugePages() {
    }

    /** Whether large allocations go through {@code mmap} with the huge-page advice. */
    public static boolean enabled() {
        return MMAP != null;
    }

    /** {@code bytes} of zeroed memory, freed when the returned segment is unreachable. */
    public static MemorySegment allocate(long bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException("negative size " + bytes);
        }
        if (MMAP == null || bytes < MIN_BYTES) {
            return Arena.ofAuto().allocate(bytes, 64);
        }
        long length = (bytes + PAGE - 1) / PAGE * PAGE + PAGE; // a page more, to align the start
        reclaim(length);
        long raw;
        try {
            raw = ((MemorySegment) MMAP.invokeExact(MemorySegment.NULL, length, PROT_READ_WRITE,
                    MAP_PRIVATE_ANONYMOUS, -1, 0L)).address();
        } catch (Throwable e) {
            throw new IllegalStateException("mmap of " + length + " bytes failed", e);
        }
        if (raw == -1L) { // MAP_FAILED: out of address space or over a limit; the heap-side allocator may still succeed
            return Arena.ofAuto().allocate(bytes, 64);
        }
        long start = (raw + PAGE - 1) & -PAGE;
        MemorySegment aligned = MemorySegment.ofAddress(start);
        try {
            int ignored = (int) MADVISE.invokeExact(aligned, length - (start - raw), MADV_HUGEPAGE); // advice only: 4 KiB pages if refused
        } catch (Throwable e) {
            throw new IllegalStateException("madvise failed", e);
        }
        MAPPED.addAndGet(length);
        return aligned.reinterpret(bytes, Arena.ofAuto(), unused -> unmap(raw, length));
    }

    /** Bytes currently mapped by {@link #allocate} (freed ones excluded): for tests and diagnostics. */
    public static long mappedBytes() {
        return MAPPED.get();
    }

    /** Collects garbage (and waits for its unmapping) while {@code length} more bytes would pass {@link #limit}; then goes on regardless. */
    private static void reclaim(long length) {
        for (int attempt = 0; attempt < 10 && MAPPED.get() + length > limit; attempt++) {
            System.gc();
            try {
                Thread.sleep(1L << attempt);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** Sets the mapped-bytes limit past which allocations collect garbage first; returns the previous one. For tests. */
    static long limit(long bytes) {
        long previous = limit;
        limit = bytes;
        return previous;
    }

    private static void unmap(long address, long length) {
        try {
            int ignored = (int) MUNMAP.invokeExact(MemorySegment.ofAddress(address), length);
            MAPPED.addAndGet(-length);
        } catch (Throwable e) {
            throw new IllegalStateException("munmap failed", e);
        }
    }
}
