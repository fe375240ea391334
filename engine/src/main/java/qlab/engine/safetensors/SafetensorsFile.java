package qlab.engine.safetensors;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import qlab.engine.QlabException;
import qlab.engine.util.HugePages;
import qlab.engine.util.MappedFile;

/**
 * One memory-mapped safetensors file: an 8-byte little-endian header length N, N bytes of JSON
 * ({@code name -> {dtype, shape, data_offsets}} plus an optional {@code __metadata__} map of
 * strings), then the data section. Every offset is validated against the file before any
 * tensor is handed out, so a corrupt file fails here with the tensor and field named, never
 * later as an index exception.
 */
public final class SafetensorsFile {

    /** The format's own limit on the JSON header (the reference implementation uses the same). */
    private static final long MAX_HEADER_BYTES = 100L << 20;

    private final Path path;
    private final MemorySegment data;
    private final Map<String, TensorInfo> tensors;
    private final Map<String, String> metadata;
    private final long headerBytes;

    private SafetensorsFile(Path path, MemorySegment data, Map<String, TensorInfo> tensors,
            Map<String, String> metadata, long headerBytes) {
        this.path = path;
        this.data = data;
        this.tensors = tensors;
        this.metadata = metadata;
        this.headerBytes = headerBytes;
    }

    public static SafetensorsFile open(Path path) {
        MemorySegment whole = MappedFile.map(path);
        long size = whole.byteSize();
        if (size < 8) {
            throw new QlabException(path + ": file is " + size + " bytes, too short for the 8-byte header length (truncated?)");
        }
        long n = whole.get(ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 0);
        if (n < 2 || n > MAX_HEADER_BYTES || n > size - 8) {
            throw new QlabException(path + ": header length " + Long.toUnsignedString(n)
                    + " is past the end of the file (" + size + " bytes; truncated or not a safetensors file?)");
        }
        byte[] headerBytes = whole.asSlice(8, n).toArray(ValueLayout.JAVA_BYTE);
        JsonNode root;
        try {
            root = new ObjectMapper().readTree(new String(headerBytes, StandardCharsets.UTF_8));
        } catch (JacksonException e) {
            throw new QlabException(path + ": header is not valid JSON: " + e.getOriginalMessage());
        }
        if (root == null || !root.isObject()) {
            throw new QlabException(path + ": header is not a JSON object");
        }
        MemorySegment data = whole.asSlice(8 + n);
        Map<String, String> metadata = new LinkedHashMap<>();
        Map<String, TensorInfo> tensors = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = root.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (e.getKey().equals("__metadata__")) {
                readMetadata(path, e.getValue(), metadata);
            } else {
                tensors.put(e.getKey(), readEntry(path, e.getKey(), e.getValue(), data.byteSize()));
            }
        }
        checkOverlaps(path, tensors.values());
        return new SafetensorsFile(path, data, Collections.unmodifiableMap(tensors),
                Collections.unmodifiableMap(metadata), n);
    }

    private static void readMetadata(Path path, JsonNode node, Map<String, String> out) {
        if (!node.isObject()) {
            throw new QlabException(path + ": field \"__metadata__\" must be an object of strings");
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (!e.getValue().isTextual()) {
                throw new QlabException(path + ": field \"__metadata__." + e.getKey() + "\" must be a string");
            }
            out.put(e.getKey(), e.getValue().textValue());
        }
    }

    private static TensorInfo readEntry(Path path, String name, JsonNode node, long dataSize) {
        String where = path + ": tensor \"" + name + "\": field ";
        if (!node.isObject()) {
            throw new QlabException(path + ": tensor \"" + name + "\" is not a JSON object");
        }
        JsonNode dt = node.get("dtype");
        if (dt == null || !dt.isTextual()) {
            throw new QlabException(where + "\"dtype\" is missing or not a string");
        }
        DType dtype = DType.byName(dt.textValue());
        if (dtype == null) {
            throw new QlabException(where + "\"dtype\" has unknown value \"" + dt.textValue() + "\"");
        }
        JsonNode sh = node.get("shape");
        if (sh == null || !sh.isArray()) {
            throw new QlabException(where + "\"shape\" is missing or not an array");
        }
        long[] shape = new long[sh.size()];
        long count = 1;
        for (int i = 0; i < shape.length; i++) {
            JsonNode d = sh.get(i);
            if (!d.isIntegralNumber() || !d.canConvertToLong() || d.longValue() < 0) {
                throw new QlabException(where + "\"shape\" has an invalid dimension " + d);
            }
            shape[i] = d.longValue();
            count = Math.multiplyHigh(count, shape[i]) != 0 ? -1 : count * shape[i];
            if (count < 0) {
                throw new QlabException(where + "\"shape\" " + sh + " overflows");
            }
        }
        JsonNode off = node.get("data_offsets");
        if (off == null || !off.isArray() || off.size() != 2
                || !off.get(0).isIntegralNumber() || !off.get(1).isIntegralNumber()
                || !off.get(0).canConvertToLong() || !off.get(1).canConvertToLong()) {
            throw new QlabException(where + "\"data_offsets\" must be an array of two integers");
        }
        long begin = off.get(0).longValue();
        long end = off.get(1).longValue();
        if (begin < 0 || end < begin) {
            throw new QlabException(where + "\"data_offsets\" " + off + " is not a valid range");
        }
        if (end > dataSize) {
            throw new QlabException(where + "\"data_offsets\" " + off + " is out of range: the data section has "
                    + dataSize + " bytes (truncated file?)");
        }
        if (count > Long.MAX_VALUE / dtype.bytes() || end - begin != count * dtype.bytes()) {
            throw new QlabException(where + "\"data_offsets\" " + off + " span " + (end - begin)
                    + " bytes, but shape " + sh + " of " + dtype + " needs " + count * dtype.bytes());
        }
        return new TensorInfo(name, dtype, shape, begin, end);
    }

    private static void checkOverlaps(Path path, java.util.Collection<TensorInfo> all) {
        List<TensorInfo> sorted = new ArrayList<>(all);
        sorted.removeIf(t -> t.byteLength() == 0);
        sorted.sort(Comparator.comparingLong(TensorInfo::begin));
        for (int i = 1; i < sorted.size(); i++) {
            TensorInfo a = sorted.get(i - 1);
            TensorInfo b = sorted.get(i);
            if (b.begin() < a.end()) {
                throw new QlabException(path + ": tensor \"" + b.name() + "\": field \"data_offsets\" ["
                        + b.begin() + ", " + b.end() + "] overlaps tensor \"" + a.name() + "\" ["
                        + a.begin() + ", " + a.end() + "]");
            }
        }
    }

    public Path path() {
        return path;
    }

    public Map<String, TensorInfo> tensors() {
        return tensors;
    }

    public Map<String, String> metadata() {
        return metadata;
    }

    /** Size of the JSON header in bytes. */
    public long headerBytes() {
        return headerBytes;
    }

    public TensorInfo info(String name) {
        TensorInfo t = tensors.get(name);
        if (t == null) {
            throw new QlabException(path + ": no tensor \"" + name + "\"");
        }
        return t;
    }

    /** The raw bytes of a tensor, as a read-only slice of the mapping. */
    public MemorySegment bytes(String name) {
        TensorInfo t = info(name);
        return data.asSlice(t.begin(), t.byteLength());
    }

    /**
     * The raw bytes of a tensor read into memory of their own, on 2 MiB pages where the system
     * gives them ({@link HugePages}): for weights that decode streams once per token, which the
     * mapping's 4 KiB pages slow down. Read through the channel, so the mapping's pages are not
     * touched and the process holds one copy.
     */
    public MemorySegment copy(String name) {
        TensorInfo t = info(name);
        MemorySegment out = HugePages.allocate(t.byteLength());
        long at = 8 + headerBytes + t.begin();
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
            for (long done = 0; done < t.byteLength(); ) {
                int chunk = (int) Math.min(1 << 30, t.byteLength() - done);
                ByteBuffer dst = out.asSlice(done, chunk).asByteBuffer();
                while (dst.hasRemaining()) {
                    if (ch.read(dst, at + done + dst.position()) < 0) {
                        throw new QlabException(path + ": tensor \"" + name + "\": file ends inside its data (truncated?)");
                    }
                }
                done += chunk;
            }
        } catch (IOException e) {
            throw new QlabException(path + ": cannot read tensor \"" + name + "\": " + e.getMessage());
        }
        return out;
    }

    /** A floating-point tensor widened exactly to f32 (BF16: bits &lt;&lt; 16; F16 with subnormals). */
    public float[] floats(String name) {
        TensorInfo t = info(name);
        long count = t.elementCount();
        if (count > Integer.MAX_VALUE - 8) {
            throw new QlabException(path + ": tensor \"" + name + "\" has " + count + " elements, more than one array holds");
        }
        MemorySegment s = bytes(name);
        float[] out = new float[(int) count];
        MappedFile.FloatKind kind = switch (t.dtype()) {
            case F32 -> MappedFile.FloatKind.F32;
            case BF16 -> MappedFile.FloatKind.BF16;
            case F16 -> MappedFile.FloatKind.F16;
            default -> throw new QlabException(path + ": tensor \"" + name + "\": field \"dtype\" is "
                    + t.dtype() + ", expected F32, F16 or BF16 for model weights");
        };
        MappedFile.widen(s, kind, out);
        return out;
    }
}
