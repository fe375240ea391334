package qlab.engine.util;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import qlab.engine.QlabException;

/**
 * Where an output file or directory is to go, checked before anything is written: a regular file
 * where a parent directory should be (a mistyped {@code --out}) is reported as one line naming both
 * paths, instead of surfacing as a {@code FileAlreadyExistsException} from deep inside a writer.
 * Commands call {@link #checkFile} before long work so that a bad path fails at once; writers call
 * {@link #prepareFile} just before they write.
 */
public final class OutputPaths {

    private OutputPaths() {
    }

    /** Checks, without creating anything, that {@code out} can become a file. */
    public static void checkFile(Path out) {
        if (Files.isDirectory(out)) {
            throw new QlabException(out + ": is a directory; give a file name");
        }
        checkAncestors(out, out.toAbsolutePath().normalize().getParent());
    }

    /** Checks, without creating anything, that {@code dir} can be or become a directory. */
    public static void checkDirectory(Path dir) {
        if (Files.exists(dir) && !Files.isDirectory(dir)) {
            throw new QlabException(dir + ": is a file, not a directory");
        }
        checkAncestors(dir, dir.toAbsolutePath().normalize().getParent());
    }

    /** {@link #checkFile}, then creates the missing parent directories of {@code out}. */
    public static void prepareFile(Path out) {
        checkFile(out);
        createDirectories(out, out.toAbsolutePath().normalize().getParent());
    }

    /** {@link #checkDirectory}, then creates {@code dir} and its missing parents. */
    public static void prepareDirectory(Path dir) {
        checkDirectory(dir);
        createDirectories(dir, dir.toAbsolutePath().normalize());
    }

    /** The nearest existing ancestor must be a directory. */
    private static void checkAncestors(Path out, Path parent) {
        for (Path p = parent; p != null; p = p.getParent()) {
            if (Files.exists(p)) {
                if (!Files.isDirectory(p)) {
                    throw new QlabException(out + ": cannot write there: " + p + " is a file, not a directory");
                }
                return;
            }
        }
    }

    private static void createDirectories(Path out, Path dir) {
        if (dir == null) {
            return;
        }
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new QlabException(out + ": cannot create the directory " + dir + ": " + IoErrors.why(e));
        }
    }
}
