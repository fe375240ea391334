package qlab.engine.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.opentest4j.AssertionFailedError;
import org.opentest4j.TestAbortedException;

/** Missing fixtures fail a test, naming the path, unless skipping was asked for explicitly. */
class FixturesTest {

    @TempDir
    Path dir;

    @Test
    void missingFixturesFailNamingThePath() {
        Path absent = dir.resolve("nowhere");
        AssertionFailedError e = assertThrows(AssertionFailedError.class, () -> Fixtures.oracle(absent, false));
        assertTrue(e.getMessage().startsWith("golden fixtures not found at " + absent.resolve("oracle") + " "),
                e.getMessage());
        assertEquals(1, e.getMessage().lines().count());
    }

    @Test
    void missingFixturesAreSkippedOnlyWithTheFlag() {
        Path absent = dir.resolve("nowhere");
        TestAbortedException e = assertThrows(TestAbortedException.class, () -> Fixtures.oracle(absent, true));
        assertTrue(e.getMessage().contains(absent.resolve("oracle").toString()), e.getMessage());
    }

    @Test
    void presentFixturesAreReturnedWhateverTheFlag() throws Exception {
        Path oracle = Files.createDirectories(dir.resolve("oracle"));
        assertEquals(oracle, Fixtures.oracle(dir, false));
        assertEquals(oracle, Fixtures.oracle(dir, true));
    }
}
