package qlab.pipeline.beam;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.beam.runners.direct.DirectOptions;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import qlab.engine.QlabException;
import qlab.pipeline.FakeEvaluator;
import qlab.pipeline.SweepFiles;
import qlab.pipeline.results.ResultFiles;
import qlab.pipeline.results.ResultRow;
import qlab.pipeline.results.ResultStore;

/**
 * The faults a long sweep meets: the process killed (SIGKILL) at random moments, a second sweep
 * on the same results directory, cache entries cut short or changed, a full disk. After each, the
 * next sweep into the same directory completes with every config's row exactly once.
 */
class SweepFaultsTest {

    /** Configs of {@link SweepFiles#MATRIX}: 26 runnable, 8 skipped. */
    private static final int CONFIGS = 34;

    @TempDir
    Path dir;

    private static SweepOptions options(Path sweep, Path out) {
        SweepOptions o = PipelineOptionsFactory.as(SweepOptions.class);
        o.setSweepFile(sweep.toString());
        o.setOut(out.toString());
        o.setReport(false);
        o.as(DirectOptions.class).setTargetParallelism(2);
        return o;
    }

    /** A sweep in a child JVM whose throughput measurements take {@code throughputMillis} each. */
    private static Process child(Path sweep, Path out, long throughputMillis, Path log) throws IOException {
        String java = ProcessHandle.current().info().command().orElse("java");
        List<String> cmd = List.of(java, "--add-modules", "jdk.incubator.vector", "-Xmx512m",
                "-Dqlab.fake.throughputMillis=" + throughputMillis,
                "-cp", System.getProperty("java.class.path"), SweepChild.class.getName(), sweep.toString(), out.toString());
        return new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    }

    /** Every config has exactly one ok or skipped row, and every result file reads. */
    private static void assertEveryConfigOnce(Path out) {
        List<ResultRow> rows = ResultFiles.readRows(List.of(out));
        Map<String, Integer> done = new HashMap<>();
        for (ResultRow r : rows) {
            if (r.ok() || "skipped".equals(r.status())) {
                done.merge(r.configId(), 1, Integer::sum);
            }
        }
        assertEquals(CONFIGS, done.size(), "every config has a row");
        done.forEach((id, n) -> assertEquals(1, n, "config " + id + " has one ok or skipped row"));
    }

    @Test
    void killedAtRandomMomentsThenResumedHasEveryRowExactlyOnce() throws Exception {
        Path sweep = SweepFiles.write(dir, "s.yaml", SweepFiles.MATRIX);
        Path out = dir.resolve("out");
        Random random = new Random(40);
        int kills = 0;
        int midSweepKills = 0;
        for (int attempt = 0; attempt < 3; attempt++) {
            Path log = dir.resolve("child-" + attempt + ".log");
            java.util.Set<Path> earlier = journalRuns(out);
            Process p = child(sweep, out, 150, log);
            if (attempt == 0) {
                // During start-up, recovery or the first stages: anywhere in the first 3 s.
                p.waitFor(500 + random.nextInt(2500), TimeUnit.MILLISECONDS);
            } else {
                // Mid-measurement: once this run has journaled a random number of rows, plus up to 100 ms.
                int rows = 1 + random.nextInt(12);
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                while (p.isAlive() && journalRows(out, earlier) < rows && System.nanoTime() < deadline) {
                    Thread.sleep(10);
                }
                p.waitFor(random.nextInt(100), TimeUnit.MILLISECONDS);
            }
            if (p.isAlive()) {
                midSweepKills += journalRows(out, earlier) > 0 ? 1 : 0;
                p.destroyForcibly(); // SIGKILL: no shutdown hook, no finally block runs
                p.waitFor();
                kills++;
            }
        }
        assertTrue(midSweepKills > 0, "a child was killed with rows journaled (" + kills + " kills)");
        assertTrue(kills > 0, "at least one child was killed");
        Process last = child(sweep, out, 0, dir.resolve("child-last.log"));
        assertTrue(last.waitFor(120, TimeUnit.SECONDS), "the resumed sweep finishes");
        assertEquals(0, last.exitValue(), Files.readString(dir.resolve("child-last.log")));
        assertEveryConfigOnce(out);
        assertFalse(hasJournal(out), "no journal left once a sweep finished");
    }

    @Test
    void aSecondSweepOnTheSameDirectoryFailsAtOnceAndCorruptsNothing() throws Exception {
        Path sweep = SweepFiles.write(dir, "s.yaml", SweepFiles.MATRIX);
        Path out = dir.resolve("out");
        Path log = dir.resolve("first.log");
        Process first = child(sweep, out, 100, log);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!hasJournal(out) && first.isAlive() && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertTrue(first.isAlive() && hasJournal(out), "the first sweep is running: " + Files.readString(log));
        QlabException e = assertThrows(QlabException.class,
                () -> SweepPipeline.run(options(sweep, out), new FakeEvaluator.Factory("second")));
        assertTrue(e.getMessage().contains("another sweep is writing to this directory"), e.getMessage());
        assertFalse(e.getMessage().contains("\n"), e.getMessage());
        assertEquals(0, FakeEvaluator.calls("second", "create"), "the second sweep did no work");
        assertTrue(first.waitFor(120, TimeUnit.SECONDS));
        assertEquals(0, first.exitValue(), Files.readString(log));
        assertEveryConfigOnce(out);
    }

    @Test
    void theLockHeldInThisProcessIsTheSameUserError() {
        ResultStore store = new ResultStore(dir.resolve("out"));
        try (ResultStore.Lock held = store.lock()) {
            QlabException e = assertThrows(QlabException.class, store::lock);
            assertTrue(e.getMessage().contains("another sweep is writing to this directory"), e.getMessage());
        }
        store.lock().close(); // released with the first
    }

    @Test
    void damagedCacheEntriesAreRebuiltNotMeasured() throws Exception {
        Path sweep = SweepFiles.write(dir, "s.yaml", SweepFiles.MATRIX);
        Path out = dir.resolve("out");
        SweepPipeline.run(options(sweep, out), new FakeEvaluator.Factory("cache-first"));
        int built = FakeEvaluator.calls("cache-first", "quantize");
        List<Path> checkpoints = files(out.resolve(".cache/checkpoints"), ".ckpt");
        List<Path> imatrices = files(out.resolve(".cache/imatrix"), ".imatrix");
        assertEquals(built, checkpoints.size());
        assertTrue(checkpoints.size() >= 3 && !imatrices.isEmpty());
        // One checkpoint cut short, one with a byte flipped (same size), one imatrix cut short.
        byte[] a = Files.readAllBytes(checkpoints.get(0));
        Files.write(checkpoints.get(0), java.util.Arrays.copyOf(a, a.length / 2));
        byte[] b = Files.readAllBytes(checkpoints.get(1));
        b[b.length - 1] ^= 1;
        Files.write(checkpoints.get(1), b);
        byte[] c = Files.readAllBytes(imatrices.get(0));
        Files.write(imatrices.get(0), java.util.Arrays.copyOf(c, c.length - 1));
        for (Path f : List.of(checkpoints.get(0), checkpoints.get(1), imatrices.get(0))) {
            Files.setLastModifiedTime(f, Files.getLastModifiedTime(checkpoints.get(2)));
        }

        // Everything is measured again in a fresh directory sharing the cache.
        SweepOptions again = options(sweep, dir.resolve("out2"));
        again.setCacheDir(out.resolve(".cache").toString());
        SweepPipeline.run(again, new FakeEvaluator.Factory("cache-second"));
        assertEquals(1, FakeEvaluator.calls("cache-second", "imatrix"), "the cut imatrix is computed again");
        // Checkpoints built on the rebuilt imatrix change too; at least the two damaged ones are rebuilt.
        int rebuilt = FakeEvaluator.calls("cache-second", "quantize");
        assertTrue(rebuilt >= 2 && rebuilt < built, "rebuilt " + rebuilt + " of " + built);
        for (Path f : files(out.resolve(".cache/checkpoints"), ".ckpt")) {
            var meta = new com.fasterxml.jackson.databind.ObjectMapper()
                    .readTree(f.resolveSibling(f.getFileName().toString().replace(".ckpt", ".json")).toFile());
            assertTrue(CacheEntry.intact(f, meta), f + " matches its recorded size and hash");
        }
        assertEveryConfigOnce(dir.resolve("out2"));
    }

    @Test
    void aFullDiskFailsWithOneLineNamingThePathAndTheResumeCompletes() throws Exception {
        Path sweep = SweepFiles.write(dir, "s.yaml", SweepFiles.MATRIX);
        Path mount = dir.resolve("small-disk");
        Files.createDirectories(mount);
        assumeTrue(run("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", mount.toString()) == 0,
                "skipped: cannot mount a small tmpfs here (needs root); the full-disk fault is not tested");
        try {
            Path out = mount.resolve("out");
            QlabException e = assertThrows(QlabException.class,
                    () -> SweepPipeline.run(options(sweep, out), new FakeEvaluator.Factory("full-disk")));
            String m = e.getMessage();
            assertFalse(m.contains("\n"), m);
            assertTrue(m.contains(mount.toString()), "names the path: " + m);
            assertTrue(m.toLowerCase().contains("no space left"), "says why: " + m);
            // Nothing half-written reads as whole: every visible result file reads.
            ResultFiles.readRows(List.of(out));

            assertEquals(0, run("mount", "-o", "remount,size=64m", mount.toString()));
            SweepPipeline.run(options(sweep, out), new FakeEvaluator.Factory("full-disk-resume"));
            assertEveryConfigOnce(out);
        } finally {
            assertEquals(0, run("umount", mount.toString()), "the test leaves no mount behind");
        }
    }

    private static int run(String... cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        return p.waitFor();
    }

    private static boolean hasJournal(Path out) throws IOException {
        Path j = out.resolve(".journal");
        if (!Files.isDirectory(j)) {
            return false;
        }
        try (Stream<Path> s = Files.list(j)) {
            return s.findAny().isPresent();
        }
    }

    /** The journal directories of runs present now. */
    private static java.util.Set<Path> journalRuns(Path out) throws IOException {
        Path j = out.resolve(".journal");
        if (!Files.isDirectory(j)) {
            return java.util.Set.of();
        }
        try (Stream<Path> s = Files.list(j)) {
            return s.collect(java.util.stream.Collectors.toSet());
        }
    }

    /** Rows journaled by runs other than {@code earlier} (those a killed child left, recovered at start). */
    private static long journalRows(Path out, java.util.Set<Path> earlier) throws IOException {
        long n = 0;
        for (Path run : journalRuns(out)) {
            if (earlier.contains(run)) {
                continue;
            }
            try (Stream<Path> s = Files.list(run)) {
                n += s.filter(p -> p.getFileName().toString().endsWith(".parquet") && !p.getFileName().toString().startsWith(".")).count();
            } catch (IOException | java.io.UncheckedIOException raced) {
                // the run finished and removed its journal while this listed it
            }
        }
        return n;
    }

    private static List<Path> files(Path dir, String suffix) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return new ArrayList<>(s.filter(p -> p.getFileName().toString().endsWith(suffix)).sorted().toList());
        }
    }
}
