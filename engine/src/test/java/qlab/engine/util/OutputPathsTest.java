package qlab.engine.util;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import qlab.engine.QlabException;
import qlab.engine.safetensors.DType;
import qlab.engine.safetensors.SafetensorsWriter;

class OutputPathsTest {

    @TempDir
    Path tmp;

    @Test
    void aWriterRefusesAPathUnderARegularFileInOneLine() throws Exception {
        Path plain = Files.writeString(tmp.resolve("plain"), "x");
        Path out = plain.resolve("deeper/x.safetensors");
        SafetensorsWriter w = new SafetensorsWriter().addFloats("t", DType.F32, new long[] {2}, new float[] {1, 2});
        QlabException e = assertThrows(QlabException.class, () -> w.write(out));
        assertEquals(out + ": cannot write there: " + plain + " is a file, not a directory", e.getMessage());
        assertEquals("x", Files.readString(plain));
    }

    @Test
    void missingParentsAreCreatedOnlyWhenPrepared() {
        Path out = tmp.resolve("a/b/c.bin");
        OutputPaths.checkFile(out);
        assertTrue(Files.notExists(tmp.resolve("a")));
        OutputPaths.prepareFile(out);
        assertTrue(Files.isDirectory(tmp.resolve("a/b")));
        QlabException dir = assertThrows(QlabException.class, () -> OutputPaths.checkFile(tmp.resolve("a")));
        assertEquals(tmp.resolve("a") + ": is a directory; give a file name", dir.getMessage());
    }

    @Test
    void aDirectoryOutputThatIsAFileIsNamed() throws Exception {
        Path plain = Files.writeString(tmp.resolve("plain"), "x");
        QlabException e = assertThrows(QlabException.class, () -> OutputPaths.prepareDirectory(plain));
        assertEquals(plain + ": is a file, not a directory", e.getMessage());
    }
}
