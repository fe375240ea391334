package qlab.engine.gguf;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
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
import java.util.function.Supplier;
import qlab.engine.QlabException;

/**
 * Writes a GGUF version 3 file (the layout {@link GgufFile} reads): metadata in the order added,
 * tensor infos in the order added, each tensor's data padded to the alignment with zeros, as
 * llama.cpp's own writer lays them out. Tensor data is produced one tensor at a time while the
 * file is written, so an exported model need not be held in memory twice. The file appears
 * atomically (written to a temporary name, then moved).
 */
public final class GgufWriter {

    private final int alignment;
    private final Map<String, GgufValue> metadata = new LinkedHashMap<>();
    private final List<Entry> tensors = new ArrayList<>();

    private record Entry(String name, long[] ne, GgufTensorType type, long bytes, Supplier<MemorySegment> data) {}

    public GgufWriter(int alignment) {
        if (alignment <= 0 || Integer.bitCount(alignment) != 1) {
            throw new IllegalArgumentException("alignment " + alignment + " is not a power of two");
        }
        this.alignment = alignment;
        if (alignment != GgufFile.DEFAULT_ALIGNMENT) {
            metadata.put("general.alignment", GgufValue.u32(alignment));
        }
    }

    public GgufWriter put(String key, GgufValue value) {
        metadata.put(key, value);
        return this;
    }

    /**
     * Adds a tensor of {@code ne} (ggml order) whose {@code bytes} bytes {@code data} returns when
     * the file is written.
     */
    public GgufWriter tensor(String name, long[] ne, GgufTensorType type, long bytes, Supplier<MemorySegment> data) {
        for (Entry e : tensors) {
            if (e.name.equals(name)) {
                throw new IllegalArgumentException("tensor " + name + " added twice");
            }
        }
        tensors.add(new Entry(name, ne.clone(), type, bytes, data));
        return this;
    }

    /** The little-endian bytes of F32 tensor data. */
    public static MemorySegment f32(float[] v) {
        ByteBuffer b = ByteBuffer.allocate(4 * v.length).order(ByteOrder.LITTLE_ENDIAN);
        b.asFloatBuffer().put(v);
        return MemorySegment.ofArray(b.array());
    }

    public void write(Path out) {
        byte[] head = header();
        Path tmp = out.resolveSibling(out.getFileName() + "." + ProcessHandle.current().pid() + "-"
                + Thread.currentThread().threadId() + ".tmp");
        try {
            if (out.getParent() != null) {
                Files.createDirectories(out.getParent());
            }
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.TRUNCATE_EXISTING)) {
                writeFully(ch, ByteBuffer.wrap(head));
                writeFully(ch, ByteBuffer.allocate(pad(head.length)));
                for (Entry e : tensors) {
                    MemorySegment data = e.data.get();
                    if (data.byteSize() != e.bytes) {
                        throw new IllegalStateException("tensor " + e.name + " has " + data.byteSize() + " bytes, declared " + e.bytes);
                    }
                    for (long done = 0; done < e.bytes; ) {
                        int chunk = (int) Math.min(1 << 26, e.bytes - done);
                        writeFully(ch, data.asSlice(done, chunk).asByteBuffer());
                        done += chunk;
                    }
                    writeFully(ch, ByteBuffer.allocate(pad(e.bytes)));
                }
            }
            Files.move(tmp, out, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            try {
                Files.deleteIfExists(tmp);
            } catch (IOException ignored) {
                // the original error is the one to report
            }
            throw new QlabException(out + ": cannot write: " + e.getMessage());
        }
    }

    private int pad(long length) {
        return (int) ((alignment - length % alignment) % alignment);
    }

    private byte[] header() {
        Bytes b = new Bytes();
        b.u32(GgufFile.MAGIC);
        b.u32(3);
        b.u64(tensors.size());
        b.u64(metadata.size());
        metadata.forEach((key, v) -> {
            b.string(key);
            b.u32(v.type().id);
            b.value(v.type(), v.elementType(), v.value());
        });
        long offset = 0;
        for (Entry e : tensors) {
            b.string(e.name);
            b.u32(e.ne.length);
            for (long d : e.ne) {
                b.u64(d);
            }
            b.u32(e.type.id());
            b.u64(offset);
            offset += e.bytes + pad(e.bytes);
        }
        return b.toByteArray();
    }

    private static void writeFully(FileChannel ch, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            ch.write(b);
        }
    }

    /** Little-endian header bytes. */
    private static final class Bytes extends ByteArrayOutputStream {
        private final ByteBuffer scratch = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);

        void u32(long v) {
            scratch.clear();
            scratch.putInt((int) v);
            write(scratch.array(), 0, 4);
        }

        void u64(long v) {
            scratch.clear();
            scratch.putLong(v);
            write(scratch.array(), 0, 8);
        }

        void string(String s) {
            byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
            u64(utf8.length);
            write(utf8, 0, utf8.length);
        }

        void value(GgufValueType type, GgufValueType elementType, Object v) {
            switch (type) {
                case UINT8, INT8, BOOL -> write(type == GgufValueType.BOOL ? ((Boolean) v ? 1 : 0) : ((Long) v).intValue());
                case UINT16, INT16 -> {
                    scratch.clear();
                    scratch.putShort(((Long) v).shortValue());
                    write(scratch.array(), 0, 2);
                }
                case UINT32, INT32 -> u32((Long) v);
                case UINT64, INT64 -> u64((Long) v);
                case FLOAT32 -> u32(Float.floatToRawIntBits(((Double) v).floatValue()));
                case FLOAT64 -> u64(Double.doubleToRawLongBits((Double) v));
                case STRING -> string((String) v);
                case ARRAY -> {
                    List<?> items = (List<?>) v;
                    u32(elementType.id);
                    u64(items.size());
                    for (Object item : items) {
                        if (elementType == GgufValueType.ARRAY) {
                            GgufValue nested = (GgufValue) item;
                            value(GgufValueType.ARRAY, nested.elementType(), nested.value());
                        } else {
                            value(elementType, null, item);
                        }
                    }
                }
            }
        }
    }
}
