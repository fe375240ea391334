package qlab.engine.util;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import qlab.engine.QlabException;

/** Read-only memory mapping of a whole file, and the exact widening of stored floats to f32. */
public final class MappedFile {

    private static final ValueLayout.OfShort SHORT_LE =
            ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfFloat FLOAT_LE =
            ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** The three float encodings of model weights. */
    public enum FloatKind { F32, F16, BF16 }

    private MappedFile() {}

    /**
     * Maps the whole file. Arena.ofAuto: the mapping lives as long as any slice handed out is
     * reachable.
     */
    public static MemorySegment map(Path path) {
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
            return ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size(), Arena.ofAuto());
        } catch (NoSuchFileException e) {
            throw new QlabException(path + ": not found");
        } catch (IOException e) {
            throw new QlabException(path + ": cannot read: " + e.getMessage());
        }
    }

    /** out.length little-endian values of {@code kind} from s, widened exactly (F16 subnormals included). */
    public static void widen(MemorySegment s, FloatKind kind, float[] out) {
        switch (kind) {
            case F32 -> MemorySegment.copy(s, FLOAT_LE, 0, out, 0, out.length);
            case BF16 -> {
                for (int i = 0; i < out.length; i++) {
                    out[i] = Float.intBitsToFloat((s.getAtIndex(SHORT_LE, i) & 0xFFFF) << 16);
                }
            }
            case F16 -> {
                for (int i = 0; i < out.length; i++) {
                    out[i] = Float.float16ToFloat(s.getAtIndex(SHORT_LE, i));
                }
            }
        }
    }
}
