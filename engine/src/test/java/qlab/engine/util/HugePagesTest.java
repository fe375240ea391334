package qlab.engine.util;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;

class HugePagesTest {

    @Test
    void nativeAccessIsThereWhereTheTestsRun() {
        // The launcher and surefire pass --enable-native-access; on Linux the mmap path must be live,
        // or every other test here would pass on the fallback alone.
        if (System.getProperty("os.name", "").startsWith("Linux")) {
            assertTrue(HugePages.enabled(), "HugePages fell back to ordinary allocations on Linux");
        }
    }

    @Test
    void smallAndLargeAllocationsAreZeroedAlignedAndExactlySized() {
        for (long bytes : new long[] {0, 1, 4097, HugePages.MIN_BYTES - 1, HugePages.MIN_BYTES, (3L << 20) + 5}) {
            MemorySegment s = HugePages.allocate(bytes);
            assertEquals(bytes, s.byteSize(), "size of " + bytes);
            assertEquals(0, s.address() % 64, "alignment of " + bytes);
            if (bytes >= HugePages.MIN_BYTES && HugePages.enabled()) {
                assertEquals(0, s.address() % (2 << 20), "a large allocation starts on a 2 MiB boundary");
            }
            assertEquals(-1, s.mismatch(MemorySegment.ofArray(new byte[(int) bytes])), "zeroed: " + bytes);
            if (bytes > 0) {
                s.set(ValueLayout.JAVA_BYTE, 0, (byte) 1);
                s.set(ValueLayout.JAVA_BYTE, bytes - 1, (byte) 2);
                assertEquals(2, s.get(ValueLayout.JAVA_BYTE, bytes - 1));
            }
            assertThrows(IndexOutOfBoundsException.class, () -> s.get(ValueLayout.JAVA_BYTE, bytes));
        }
        assertThrows(IllegalArgumentException.class, () -> HugePages.allocate(-1));
    }

    @Test
    void unreachableAllocationsAreUnmapped() throws InterruptedException {
        long before = HugePages.mappedBytes();
        MemorySegment s = HugePages.allocate(8L << 20);
        s.fill((byte) 3);
        if (!HugePages.enabled()) {
            return;
        }
        assertTrue(HugePages.mappedBytes() >= before + (8L << 20), "the allocation is counted as mapped");
        s = null;
        for (int i = 0; i < 200 && HugePages.mappedBytes() > before; i++) {
            System.gc();
            Thread.sleep(10);
        }
        assertEquals(before, HugePages.mappedBytes(), "the unreachable mapping was not unmapped");
    }

    @Test
    void pastTheLimitAllocationsCollectTheUnreachableOnesFirst() {
        if (!HugePages.enabled()) {
            return;
        }
        long base = HugePages.mappedBytes();
        long previous = HugePages.limit(base + (64L << 20));
        try {
            long most = 0;
            for (int i = 0; i < 40; i++) {
                MemorySegment s = HugePages.allocate(14L << 20); // 16 MiB mapped with the alignment page
                s.set(ValueLayout.JAVA_BYTE, s.byteSize() - 1, (byte) 1);
                most = Math.max(most, HugePages.mappedBytes());
            }
            // 640 MiB allocated in all; with the collections, the mapped total stays near the limit.
            assertTrue(most - base <= 128L << 20, "mapped up to " + (most - base) + " bytes over the start");
        } finally {
            HugePages.limit(previous);
        }
    }
}
