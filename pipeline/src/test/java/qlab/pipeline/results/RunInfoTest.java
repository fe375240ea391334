package qlab.pipeline.results;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The code version a run records: a checkout's commit, dirty only for changes to the code. */
class RunInfoTest {

    @TempDir
    Path repo;

    private void git(String... args) throws Exception {
        String[] cmd = new String[args.length + 7];
        System.arraycopy(new String[] {"git", "-C", repo.toString(), "-c", "user.name=t", "-c", "user.email=t@t"}, 0, cmd, 0, 7);
        System.arraycopy(args, 0, cmd, 7, args.length);
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertEquals(0, p.waitFor(), String.join(" ", cmd) + ": " + out);
    }

    @Test
    void changesToResultsAndModelsLeaveTheCheckoutClean() throws Exception {
        git("init", "-q");
        Files.createDirectories(repo.resolve("results/perf"));
        Files.createDirectories(repo.resolve("models/demo"));
        Files.writeString(repo.resolve("results/perf/old.parquet"), "rows");
        Files.writeString(repo.resolve("models/demo/config.json"), "{}");
        Files.writeString(repo.resolve("Code.java"), "class Code {}");
        git("add", "-A");
        git("commit", "-q", "-m", "init");
        String commit = RunInfo.codeVersion(repo);
        assertEquals(40, commit.length(), commit);

        Files.delete(repo.resolve("results/perf/old.parquet")); // a fresh sweep empties its results directory
        Files.writeString(repo.resolve("models/demo/config.json"), "{\"changed\": true}");
        Files.writeString(repo.resolve("untracked.txt"), "x");
        assertEquals(commit, RunInfo.codeVersion(repo));

        Files.writeString(repo.resolve("Code.java"), "class Code { int x; }");
        assertEquals(commit + "-dirty", RunInfo.codeVersion(repo));
        assertTrue(RunInfo.currentCodeVersion().length() >= 7);
    }
}
