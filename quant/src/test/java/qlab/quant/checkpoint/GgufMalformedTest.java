package qlab.quant.checkpoint;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import qlab.engine.QlabException;
import qlab.engine.gguf.GgufFile;
import qlab.engine.gguf.GgufModel;
import qlab.engine.gguf.GgufTensorType;
import qlab.engine.gguf.GgufTokenizer;
import qlab.engine.gguf.GgufValue;
import qlab.engine.gguf.GgufValueType;
import qlab.engine.gguf.GgufWriter;
import qlab.engine.testing.GgmlFixtures;

/**
 * Malformed GGUF files each fail with one line naming the file and the field: a set of targeted
 * corruptions of a small file, and thousands of seeded random mutations of the fixture's header.
 */
class GgufMalformedTest {

    private static final String NAME = "bad.gguf";

    /** A small valid file: two metadata pairs, two F32 tensors of 8 and 16 values. */
    private static byte[] small(Path dir) throws IOException {
        Path p = dir.resolve("small.gguf");
        new GgufWriter(32)
                .put("general.architecture", GgufValue.string("qwen2"))
                .put("list", GgufValue.array(GgufValueType.INT32, List.of(1L, 2L, 3L)))
                .tensor("tensor_a", new long[] {8}, GgufTensorType.F32, 32, () -> MemorySegment.ofArray(new byte[32]))
                .tensor("tensor_b", new long[] {4, 4}, GgufTensorType.F32, 64, () -> MemorySegment.ofArray(new byte[64]))
                .write(p);
        return Files.readAllBytes(p);
    }

    private static int find(byte[] b, String s) {
        byte[] n = s.getBytes(StandardCharsets.UTF_8);
        outer:
        for (int i = 0; i + n.length <= b.length; i++) {
            for (int j = 0; j < n.length; j++) {
                if (b[i + j] != n[j]) {
                    continue outer;
                }
            }
            return i;
        }
        throw new AssertionError(s + " not found");
    }

    private static ByteBuffer le(byte[] b) {
        return ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** Offset of the u32 n_dims of tensor_b's info (right after its name). */
    private static int infoB(byte[] b) {
        return find(b, "tensor_b") + "tensor_b".length();
    }

    static Stream<Arguments> corruptions() {
        return Stream.of(
                Arguments.of("wrong magic", "magic", (Consumer<byte[]>) b -> b[0] = 'X'),
                Arguments.of("version 1", "version", (Consumer<byte[]>) b -> le(b).putInt(4, 1)),
                Arguments.of("unknown version", "version", (Consumer<byte[]>) b -> le(b).putInt(4, 7)),
                Arguments.of("big-endian", "version", (Consumer<byte[]>) b -> le(b).putInt(4, 0x03000000)),
                Arguments.of("absurd tensor count", "tensor_count", (Consumer<byte[]>) b -> le(b).putLong(8, 1L << 60)),
                Arguments.of("absurd kv count", "metadata_kv_count", (Consumer<byte[]>) b -> le(b).putLong(16, -1L)),
                Arguments.of("absurd key length", "metadata key #0", (Consumer<byte[]>) b -> le(b).putLong(24, 1L << 40)),
                Arguments.of("absurd string length", "general.architecture",
                        (Consumer<byte[]>) b -> le(b).putLong(find(b, "general.architecture") + 20 + 4, 1L << 50)),
                Arguments.of("unknown value type", "general.architecture",
                        (Consumer<byte[]>) b -> le(b).putInt(find(b, "general.architecture") + 20, 77)),
                Arguments.of("absurd array length", "list",
                        (Consumer<byte[]>) b -> le(b).putLong(find(b, "list") + 4 + 4 + 4, 1L << 61)),
                Arguments.of("too many dimensions", "n_dims", (Consumer<byte[]>) b -> le(b).putInt(infoB(b), 9)),
                Arguments.of("unknown tensor type", "type", (Consumer<byte[]>) b -> le(b).putInt(infoB(b) + 4 + 16, 99)),
                Arguments.of("overflowing shape", "ne[1]", (Consumer<byte[]>) b -> le(b).putLong(infoB(b) + 4 + 8, Long.MAX_VALUE)),
                Arguments.of("misaligned offset", "offset", (Consumer<byte[]>) b -> le(b).putLong(infoB(b) + 4 + 16 + 4, 33)),
                Arguments.of("offset past the end", "offset", (Consumer<byte[]>) b -> le(b).putLong(infoB(b) + 4 + 16 + 4, 1L << 40)),
                Arguments.of("overlapping tensors", "offset", (Consumer<byte[]>) b -> le(b).putLong(infoB(b) + 4 + 16 + 4, 0)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("corruptions")
    void eachCorruptionNamesTheFileAndTheField(String what, String field, Consumer<byte[]> corrupt, @TempDir Path dir)
            throws IOException {
        byte[] b = small(dir);
        GgufFile.read(NAME, MemorySegment.ofArray(b), GgufCheckpoint.TYPES); // the original reads
        corrupt.accept(b);
        QlabException e = assertThrows(QlabException.class,
                () -> GgufFile.read(NAME, MemorySegment.ofArray(b), GgufCheckpoint.TYPES), what);
        assertOneLine(e);
        assertTrue(e.getMessage().contains(field), what + ": " + e.getMessage());
    }

    @Test
    void truncationAnywhereIsNamed(@TempDir Path dir) throws IOException {
        byte[] b = small(dir);
        for (int len = 0; len < b.length; len++) {
            MemorySegment cut = MemorySegment.ofArray(b).asSlice(0, len);
            QlabException e = assertThrows(QlabException.class, () -> GgufFile.read(NAME, cut, GgufCheckpoint.TYPES),
                    "truncated to " + len);
            assertOneLine(e);
        }
    }

    @Test
    void aFileOnDiskIsNamedByItsPath(@TempDir Path dir) throws IOException {
        Path p = dir.resolve("cut.gguf");
        Files.write(p, java.util.Arrays.copyOf(small(dir), 40));
        QlabException e = assertThrows(QlabException.class, () -> GgufCheckpoint.open(p));
        assertTrue(e.getMessage().startsWith(p + ": "), e.getMessage());
    }

    @Test
    void badAlignmentIsNamed(@TempDir Path dir) {
        Path p = dir.resolve("align.gguf");
        new GgufWriter(32).put("general.alignment", GgufValue.u32(24)).write(p);
        QlabException e = assertThrows(QlabException.class, () -> GgufCheckpoint.open(p));
        assertTrue(e.getMessage().contains("general.alignment"), e.getMessage());
    }

    /**
     * Thousands of seeded mutations of the fixture's header (bytes set at random, 8-byte fields set
     * to extremes, truncations): each reads, or fails with a one-line QlabException naming the file.
     * What reads is then mapped as a model, and every 256th as a tokenizer, under the same rule.
     */
    @Test
    void randomMutationsOfTheFixtureFailOnlyAsNamedErrors() throws IOException {
        byte[] original = Files.readAllBytes(GgmlFixtures.model("tiny-k.f16.gguf"));
        int header = (int) GgufFile.read(NAME, MemorySegment.ofArray(original), GgufCheckpoint.TYPES).dataStart();
        byte[] b = original.clone();
        Random rnd = new Random(20261201L);
        long[] extremes = {0, 1, -1, Long.MAX_VALUE, Long.MIN_VALUE, 1L << 32, 0xFFFFFFFFL, 1L << 62};
        int failed = 0;
        int trials = 2000;
        for (int trial = 0; trial < trials; trial++) {
            int kind = rnd.nextInt(4);
            int len = b.length;
            // Most of the header is the vocabulary; aim half the mutations at the fixed fields and tensor infos.
            int lo = rnd.nextBoolean() ? 0 : Math.max(0, header - 2400);
            int at = lo + rnd.nextInt(header - lo - 8);
            switch (kind) {
                case 0 -> {
                    for (int i = 0, n = 1 + rnd.nextInt(4); i < n; i++) {
                        b[at + rnd.nextInt(8)] = (byte) rnd.nextInt(256);
                    }
                }
                case 1 -> le(b).putLong(at, extremes[rnd.nextInt(extremes.length)]);
                case 2 -> le(b).putInt(at, (int) extremes[rnd.nextInt(extremes.length)]);
                default -> len = rnd.nextInt(header + 64);
            }
            MemorySegment seg = MemorySegment.ofArray(b).asSlice(0, len);
            try {
                GgufFile f = GgufFile.read(NAME, seg, GgufCheckpoint.TYPES);
                GgufModel.of(f);
                if (trial % 256 == 0 && GgufTokenizer.present(f)) {
                    GgufTokenizer.read(f);
                }
            } catch (QlabException e) {
                assertOneLine(e);
                assertTrue(e.getMessage().startsWith(NAME + ": "), e.getMessage());
                failed++;
            } catch (Throwable t) {
                throw new AssertionError("trial " + trial + " (kind " + kind + " at " + at + ", length " + len
                        + ") escaped as " + t, t);
            }
            System.arraycopy(original, 0, b, 0, header + 64);
        }
        assertTrue(failed > trials / 4, "only " + failed + " of " + trials + " mutations were rejected");
    }

    private static void assertOneLine(QlabException e) {
        assertFalse(e.getMessage().contains("\n"), e.getMessage());
        assertTrue(e.getMessage().startsWith(NAME + ": ") || e.getMessage().contains(".gguf: "), e.getMessage());
        assertEquals(QlabException.class, e.getClass());
    }
}
