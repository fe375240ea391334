package qlab.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A new user's first minutes: the checkout's files (what git tracks and does not ignore) copied
 * into a directory with no shared/ beside it, then the README's two commands run there through the
 * launcher. The first builds qlab and runs the quick sweep to the end; the second stops in one line
 * that names the missing fixtures.
 */
class FreshCloneTest {

    private static final long SWEEP_MINUTES = 20;

    @Test
    void theReadmeCommandsWorkInACheckoutWithNothingBesideIt(@TempDir Path tmp) throws Exception {
        Path home = Path.of(System.getProperty("qlab.home")).toAbsolutePath().normalize();
        Path clone = tmp.resolve("qlab");
        copyCheckout(home, clone);
        assertFalse(Files.exists(clone.resolveSibling("shared")), "nothing may stand beside the copy");

        Run test = run(clone, tmp.resolve("test.log"), 2, "./qlab", "test");
        assertEquals(2, test.exit, test.output);
        List<String> lines = test.output.lines().filter(l -> !l.isBlank()).toList();
        assertEquals(1, lines.size(), "one line, got:\n" + test.output);
        assertTrue(lines.getFirst().contains("golden fixtures") && lines.getFirst().contains("shared")
                && lines.getFirst().contains("-Dqlab.fixtures.optional=true"), lines.getFirst());

        Run sweep = run(clone, tmp.resolve("sweep.log"), SWEEP_MINUTES, "./qlab", "sweep", "configs/quick.yaml");
        assertEquals(0, sweep.exit, () -> tail(sweep.output));
        assertTrue(sweep.output.lines().anyMatch(l -> l.matches("run \\S+: [1-9]\\d* ok, \\d+ skipped, 0 failed.*")),
                () -> "no summary line with configs run and none failed:\n" + tail(sweep.output));
        try (Stream<Path> files = Files.walk(clone.resolve("results/quick"))) {
            assertTrue(files.anyMatch(p -> p.toString().endsWith(".parquet")), "no Parquet results written");
        }
    }

    /** The tracked and the untracked-but-not-ignored files, as `git clone` of a committed tree would give. */
    private static void copyCheckout(Path home, Path clone) throws Exception {
        Process git = new ProcessBuilder("git", "-C", home.toString(), "ls-files", "-z", "--cached", "--others",
                "--exclude-standard").redirectError(ProcessBuilder.Redirect.INHERIT).start();
        String listing = new String(git.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, git.waitFor(), "git ls-files failed in " + home);
        int copied = 0;
        for (String name : listing.split("\0")) {
            if (name.isEmpty()) {
                continue;
            }
            Path from = home.resolve(name);
            if (!Files.isRegularFile(from)) {
                continue; // listed but deleted in the working tree
            }
            Path to = clone.resolve(name);
            Files.createDirectories(to.getParent());
            Files.copy(from, to, StandardCopyOption.COPY_ATTRIBUTES);
            copied++;
        }
        assertTrue(copied > 100, "only " + copied + " files listed in " + home);
    }

    private record Run(int exit, String output) {}

    private static Run run(Path dir, Path log, long minutes, String... command) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true)
                .redirectOutput(log.toFile());
        Process p = pb.start();
        if (!p.waitFor(minutes, TimeUnit.MINUTES)) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            throw new AssertionError(String.join(" ", command) + " took over " + minutes + " minutes:\n"
                    + tail(read(log)));
        }
        return new Run(p.exitValue(), read(log));
    }

    private static String read(Path log) throws IOException {
        return Files.readString(log, StandardCharsets.UTF_8);
    }

    private static String tail(String output) {
        List<String> lines = new ArrayList<>(output.lines().toList());
        return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
    }
}
