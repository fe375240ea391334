package qlab.engine.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Consumer;
import qlab.engine.QlabException;

/**
 * What every fuzz target checks of a parser, whatever the input: it returns, or throws a
 * {@link QlabException} whose message is one line (what the command line prints). Any other
 * throwable escapes and is the fuzzer's finding. An input may also not make the parser allocate
 * more than a budget proportional to its size (an allocation sized by an unchecked field shows up
 * here even when the heap could hold it), nor take longer than {@link #MAX_MILLIS} (the fuzz
 * methods' {@code @Timeout} stops a hang; this catches the merely slow).
 */
public final class FuzzContract {

    /** Bytes any input may allocate, plus {@link #ALLOCATION_PER_BYTE} per input byte. */
    public static final long ALLOCATION_FLOOR = 64L << 20;
    /** Room for parsers that widen what they read (q4 codes to f32 is 8x, a token list to maps more). */
    public static final long ALLOCATION_PER_BYTE = 256;
    public static final long MAX_MILLIS = 5_000;

    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    /** Scratch directory for inputs that a parser reads as files; one per JVM. */
    private static final Path SCRATCH = scratch();

    private FuzzContract() {}

    /** Runs {@code parse} on {@code data} written as a file called {@code fileName}. */
    public static void onFile(byte[] data, String fileName, Consumer<Path> parse) {
        onFile(data, fileName, ALLOCATION_FLOOR, parse);
    }

    /** As {@link #onFile(byte[], String, Consumer)}, with another allocation floor for a parser with large fixed buffers. */
    public static void onFile(byte[] data, String fileName, long allocationFloor, Consumer<Path> parse) {
        Path file = SCRATCH.resolve(fileName);
        try {
            Files.write(file, data);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        check(data.length, allocationFloor, () -> parse.accept(file));
    }

    /**
     * Runs each stage in turn, a user error in one not stopping the next (a target reaches the
     * later stages of a parser that way: the tokenizer of a GGUF file whose tensors are bad).
     */
    public static void each(Runnable... stages) {
        for (Runnable stage : stages) {
            try {
                stage.run();
            } catch (QlabException e) {
                requireOneLine(e);
            }
        }
    }

    /**
     * Runs {@code parse} on an input of {@code inputBytes} bytes and checks the contract. An input
     * over the allocation or time budget is run once more before it fails: the first input a JVM
     * parses also pays for class loading and static tables (the tokenizer's Unicode classes).
     */
    public static void check(long inputBytes, Runnable parse) {
        check(inputBytes, ALLOCATION_FLOOR, parse);
    }

    private static void check(long inputBytes, long allocationFloor, Runnable parse) {
        long budget = allocationFloor + ALLOCATION_PER_BYTE * inputBytes;
        long[] cost = measure(parse);
        if (cost[0] > budget || cost[1] > MAX_MILLIS) {
            cost = measure(parse);
        }
        if (cost[0] > budget) {
            throw new AssertionError("allocated " + cost[0] + " bytes for a " + inputBytes
                    + "-byte input (budget " + budget + ")");
        }
        if (cost[1] > MAX_MILLIS) {
            throw new AssertionError("took " + cost[1] + " ms for a " + inputBytes + "-byte input");
        }
    }

    /** Bytes allocated by this thread and milliseconds taken. */
    private static long[] measure(Runnable parse) {
        long allocatedBefore = THREADS.getCurrentThreadAllocatedBytes();
        long start = System.nanoTime();
        try {
            parse.run();
        } catch (QlabException e) {
            requireOneLine(e);
        }
        return new long[] {THREADS.getCurrentThreadAllocatedBytes() - allocatedBefore, (System.nanoTime() - start) / 1_000_000};
    }

    private static void requireOneLine(QlabException e) {
        String m = e.getMessage();
        if (m == null || m.isBlank() || m.indexOf('\n') >= 0 || m.indexOf('\r') >= 0) {
            throw new AssertionError("a user error must be one non-empty line, got: " + m, e);
        }
    }

    private static Path scratch() {
        try {
            Path shm = Path.of("/dev/shm");
            Path dir = Files.isDirectory(shm) && Files.isWritable(shm)
                    ? Files.createTempDirectory(shm, "qlab-fuzz") : Files.createTempDirectory("qlab-fuzz");
            dir.toFile().deleteOnExit();
            Runtime.getRuntime().addShutdownHook(new Thread(() -> deleteTree(dir)));
            return dir;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void deleteTree(Path dir) {
        try (var files = Files.walk(dir)) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException | UncheckedIOException ignored) {
            // best effort at exit
        }
    }
}
