package qlab.engine.safetensors;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import qlab.engine.QlabException;
import qlab.engine.util.IoErrors;
import qlab.engine.util.OutputPaths;

/**
 * Writes a safetensors file: tensors in the order added, contiguous (no gaps, as the reference
 * reader demands), the header padded with spaces so the data section starts on an
 * {@code alignment}-byte boundary. Written to a temporary file and renamed, so a killed run never
 * leaves a half-written file under the final name. Same input, same bytes.
 */
public final class SafetensorsWriter {

    /** Produces a tensor's bytes into a little-endian buffer of exactly its size, in pieces. */
    @FunctionalInterface
    public interface Payload {
        /** Writes bytes [offset, offset + buf.remaining()) of the tensor into buf. */
        void fill(long offset, ByteBuffer buf);
    }

    private record Entry(String name, DType dtype, long[] shape, long bytes, Payload payload) {}

    private final List<Entry> entries = new ArrayList<>();
    private final Map<String, String> metadata = new LinkedHashMap<>();
    private final int alignment;

    public SafetensorsWriter(int alignment) {
        if (alignment < 8 || Integer.bitCount(alignment) != 1) {
            throw new IllegalArgumentException("alignment must be a power of two >= 8: " + alignment);
        }
        this.alignment = alignment;
    }

    public SafetensorsWriter() {
        this(8);
    }

    public SafetensorsWriter metadata(String key, String value) {
        metadata.put(key, value);
        return this;
    }

    public SafetensorsWriter add(String name, DType dtype, long[] shape, Payload payload) {
        long n = 1;
        for (long d : shape) {
            n *= d;
        }
        entries.add(new Entry(name, dtype, shape.clone(), n * dtype.bytes(), payload));
        return this;
    }

    /** Adds f32 values stored as {@code dtype} (F32, F16 with round-to-nearest-even, or BF16 likewise). */
    public SafetensorsWriter addFloats(String name, DType dtype, long[] shape, float[] values) {
        return add(name, dtype, shape, (offset, buf) -> {
            int w = dtype.bytes();
            int i = (int) (offset / w);
            while (buf.hasRemaining()) {
                float v = values[i++];
                switch (dtype) {
                    case F32 -> buf.putFloat(v);
                    case F16 -> buf.putShort(Float.floatToFloat16(v));
                    case BF16 -> buf.putShort(toBf16(v));
                    default -> throw new IllegalArgumentException("not a float dtype: " + dtype);
                }
            }
        });
    }

    /** f32 to bf16 with round-to-nearest-even (NaN stays NaN). */
    public static short toBf16(float v) {
        int bits = Float.floatToRawIntBits(v);
        if (Float.isNaN(v)) {
            return (short) ((bits >>> 16) | 0x40);
        }
        int rounding = 0x7FFF + ((bits >>> 16) & 1);
        return (short) ((bits + rounding) >>> 16);
    }

    public void write(Path out) {
        ObjectMapper mapper = new ObjectMapper();
        ObjectNode header = mapper.createObjectNode();
        if (!metadata.isEmpty()) {
            ObjectNode meta = header.putObject("__metadata__");
            metadata.forEach(meta::put);
        }
        long offset = 0;
        for (Entry e : entries) {
            ObjectNode t = header.putObject(e.name);
            t.put("dtype", e.dtype.name());
            ArrayNode shape = t.putArray("shape");
            for (long d : e.shape) {
                shape.add(d);
            }
            t.putArray("data_offsets").add(offset).add(offset + e.bytes);
            offset += e.bytes;
        }
        byte[] json;
        try {
            json = mapper.writeValueAsString(header).getBytes(StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        int padded = (int) (((8L + json.length + alignment - 1) / alignment) * alignment - 8);
        ByteBuffer head = ByteBuffer.allocate(8 + padded).order(ByteOrder.LITTLE_ENDIAN);
        head.putLong(padded).put(json);
        while (head.hasRemaining()) {
            head.put((byte) ' ');
        }
        head.flip();
        Path tmp = out.resolveSibling(out.getFileName() + "." + ProcessHandle.current().pid() + "-" + Thread.currentThread().threadId() + ".tmp");
        OutputPaths.prepareFile(out);
        try {
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.TRUNCATE_EXISTING)) {
                writeFully(ch, head);
                ByteBuffer buf = ByteBuffer.allocateDirect(1 << 20).order(ByteOrder.LITTLE_ENDIAN);
                for (Entry e : entries) {
                    for (long done = 0; done < e.bytes; ) {
                        int chunk = (int) Math.min(buf.capacity() - (buf.capacity() % 8), e.bytes - done);
                        buf.clear().limit(chunk);
                        e.payload.fill(done, buf);
                        if (buf.hasRemaining()) {
                            throw new IllegalStateException("payload of " + e.name + " left " + buf.remaining() + " bytes unfilled");
                        }
                        buf.flip();
                        writeFully(ch, buf);
                        done += chunk;
                    }
                }
            }
            Files.move(tmp, out, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            try {
                Files.deleteIfExists(tmp);
            } catch (IOException ignored) {
                // the original error is the one to report
            }
            throw new QlabException(out + ": cannot write: " + IoErrors.why(e));
        }
    }

    private static void writeFully(FileChannel ch, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            ch.write(b);
        }
    }
}
