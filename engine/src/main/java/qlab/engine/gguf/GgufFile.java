package qlab.engine.gguf;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;
import qlab.engine.QlabException;
import qlab.engine.util.MappedFile;

/**
 * One memory-mapped GGUF file (llama.cpp's container), versions 2 and 3, little-endian:
 *
 * <pre>
 * "GGUF" | u32 version | u64 tensor_count | u64 kv_count
 * kv_count x (string key | u32 value_type | value)          string = u64 length | UTF-8 bytes
 * tensor_count x (string name | u32 n_dims | u64 ne[n_dims] | u32 ggml_type | u64 offset)
 * padding to general.alignment (default 32) | data section (tensor offsets are relative to it)
 * </pre>
 *
 * Every count, length and offset is checked against the bytes that remain before anything is
 * allocated from it, so a corrupt file fails here with one line naming the file and the field,
 * never later as an index exception or an out-of-memory error.
 */
public final class GgufFile {

    public static final int MAGIC = 0x46554747; // "GGUF" read as a little-endian u32
    public static final int DEFAULT_ALIGNMENT = 32;
    /** ggml's limit on tensor dimensions (GGML_MAX_DIMS). */
    public static final int MAX_DIMS = 4;
    private static final int MAX_ARRAY_DEPTH = 8;

    static final ValueLayout.OfInt INT_LE = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfLong LONG_LE = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfShort SHORT_LE = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfFloat FLOAT_LE = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfDouble DOUBLE_LE = ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final String source;
    private final int version;
    private final Map<String, GgufValue> metadata;
    private final Map<String, GgufTensor> tensors;
    private final int alignment;
    private final long dataStart;
    private final MemorySegment data;

    private GgufFile(String source, int version, Map<String, GgufValue> metadata, Map<String, GgufTensor> tensors,
            int alignment, long dataStart, MemorySegment data) {
        this.source = source;
        this.version = version;
        this.metadata = metadata;
        this.tensors = tensors;
        this.alignment = alignment;
        this.dataStart = dataStart;
        this.data = data;
    }

    /**
     * Maps and validates a file.
     *
     * @param types the ggml types by id (null for an id ggml does not define): their block sizes
     *     give each tensor's extent
     */
    public static GgufFile open(Path path, IntFunction<GgufTensorType> types) {
        MemorySegment whole = MappedFile.map(path);
        return read(path.toString(), whole, types);
    }

    /** Reads a GGUF held in {@code whole} (messages name {@code source} as the file). */
    public static GgufFile read(String source, MemorySegment whole, IntFunction<GgufTensorType> types) {
        Cursor in = new Cursor(source, whole);
        if (whole.byteSize() < 4 || whole.get(INT_LE, 0) != MAGIC) {
            throw new QlabException(source + ": field \"magic\" is not \"GGUF\" (not a GGUF file)");
        }
        in.pos = 4;
        int version = (int) in.u32(field("version"));
        if (version == 1) {
            throw new QlabException(source + ": field \"version\" is 1; GGUF version 1 (32-bit counts) is not supported, only 2 and 3");
        }
        if (version != 2 && version != 3) {
            String hint = Integer.reverseBytes(version) == 2 || Integer.reverseBytes(version) == 3
                    ? " (a big-endian GGUF; only little-endian files are supported)" : "";
            throw new QlabException(source + ": field \"version\" is " + Integer.toUnsignedString(version)
                    + ", only GGUF versions 2 and 3 are supported" + hint);
        }
        // Each tensor info takes at least 8 (name) + 4 + 8 + 4 + 8 bytes, each pair at least 8 + 4 + 1.
        long tensorCount = in.count(field("tensor_count"), 32);
        long kvCount = in.count(field("metadata_kv_count"), 13);

        Map<String, GgufValue> metadata = new LinkedHashMap<>();
        for (long i = 0; i < kvCount; i++) {
            String key = in.string(field("metadata key #" + i));
            if (metadata.containsKey(key)) {
                throw new QlabException(source + ": " + field(key) + " appears twice in the metadata");
            }
            GgufValueType type = in.valueType(key);
            metadata.put(key, in.value(key, type, 0));
        }
        int alignment = DEFAULT_ALIGNMENT;
        GgufValue a = metadata.get("general.alignment");
        if (a != null) {
            long v = a.type().isInteger() ? (Long) a.value() : -1;
            if (a.type() != GgufValueType.UINT32 || v <= 0 || Long.bitCount(v) != 1) {
                throw new QlabException(source + ": field \"general.alignment\" is " + a.type() + " " + a.describe()
                        + ", expected a power of two as UINT32");
            }
            alignment = (int) v;
        }

        List<GgufTensor> infos = new ArrayList<>();
        Map<String, Long> tensorAt = new LinkedHashMap<>();
        for (long i = 0; i < tensorCount; i++) {
            String name = in.string(field("tensor #" + i + " name"));
            String tensor = "tensor " + quoted(name) + ": ";
            if (tensorAt.containsKey(name)) {
                throw new QlabException(source + ": " + tensor + field("name") + " appears twice");
            }
            long nDims = in.u32(tensor + field("n_dims"));
            if (nDims < 1 || nDims > MAX_DIMS) {
                throw new QlabException(source + ": " + tensor + field("n_dims") + " is " + nDims + ", expected 1 to " + MAX_DIMS);
            }
            long[] ne = new long[(int) nDims];
            long elements = 1;
            for (int d = 0; d < nDims; d++) {
                ne[d] = in.u64(tensor + field("ne[" + d + "]"));
                if (ne[d] < 0 || (ne[d] != 0 && elements > Long.MAX_VALUE / ne[d])) {
                    throw new QlabException(source + ": " + tensor + field("ne[" + d + "]") + " " + Long.toUnsignedString(ne[d])
                            + " makes the element count overflow");
                }
                elements *= ne[d];
            }
            long typeId = in.u32(tensor + field("type"));
            GgufTensorType type = typeId > Integer.MAX_VALUE ? null : types.apply((int) typeId);
            if (type == null) {
                throw new QlabException(source + ": " + tensor + field("type") + " is " + typeId + ", not a ggml type this reader knows");
            }
            long offset = in.u64(tensor + field("offset"));
            long rowBytes = type.rowBytes(ne[0]);
            if (rowBytes < 0) {
                throw new QlabException(source + ": " + tensor + field("ne[0]") + " is " + ne[0] + ", not a multiple of "
                        + type + "'s block of " + type.blockSize());
            }
            long rows = ne[0] == 0 ? 0 : elements / ne[0];
            if (rows != 0 && rowBytes > Long.MAX_VALUE / rows) {
                throw new QlabException(source + ": " + tensor + field("ne") + " makes the byte size overflow");
            }
            if (offset < 0 || offset % alignment != 0) {
                throw new QlabException(source + ": " + tensor + field("offset") + " " + Long.toUnsignedString(offset)
                        + " is not a multiple of the alignment " + alignment);
            }
            infos.add(new GgufTensor(name, ne, type, offset, rowBytes * rows));
            tensorAt.put(name, offset);
        }
        long dataStart = (in.pos + alignment - 1) / alignment * alignment;
        long dataSize = Math.max(0, whole.byteSize() - dataStart);
        for (GgufTensor t : infos) {
            if (t.offset() > dataSize || t.bytes() > dataSize - t.offset()) {
                throw new QlabException(source + ": tensor " + quoted(t.name()) + ": field \"offset\" " + t.offset()
                        + " + " + t.bytes() + " bytes is past the end of the data section (" + dataSize
                        + " bytes; truncated file?)");
            }
        }
        checkOverlaps(source, infos);
        Map<String, GgufTensor> byName = new LinkedHashMap<>();
        for (GgufTensor t : infos) {
            byName.put(t.name(), t);
        }
        MemorySegment data = whole.asSlice(Math.min(dataStart, whole.byteSize()));
        return new GgufFile(source, version, Collections.unmodifiableMap(metadata), Collections.unmodifiableMap(byName),
                alignment, dataStart, data);
    }

    /** A field's name as a message shows it: quoted and escaped, so a name read from the file cannot break the line. */
    private static String field(String name) {
        return "field " + quoted(name);
    }

    private static void checkOverlaps(String source, List<GgufTensor> all) {
        List<GgufTensor> sorted = new ArrayList<>(all);
        sorted.removeIf(t -> t.bytes() == 0);
        sorted.sort(Comparator.comparingLong(GgufTensor::offset));
        for (int i = 1; i < sorted.size(); i++) {
            GgufTensor a = sorted.get(i - 1);
            GgufTensor b = sorted.get(i);
            if (b.offset() < a.end()) {
                throw new QlabException(source + ": tensor " + quoted(b.name()) + ": field \"offset\" " + b.offset()
                        + " overlaps tensor " + quoted(a.name()) + " [" + a.offset() + ", " + a.end() + ")");
            }
        }
    }

    /** Reads the header fields in order, each bounds-checked. */
    private static final class Cursor {
        final String source;
        final MemorySegment seg;
        long pos;
        final java.nio.charset.CharsetDecoder utf8 = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT).onUnmappableCharacter(CodingErrorAction.REPORT);

        Cursor(String source, MemorySegment seg) {
            this.source = source;
            this.seg = seg;
        }

        long remaining() {
            return seg.byteSize() - pos;
        }

        void need(long bytes, String field) {
            if (bytes < 0 || bytes > remaining()) {
                throw new QlabException(source + ": " + field + " needs " + Long.toUnsignedString(bytes)
                        + " bytes at offset " + pos + ", the file ends at " + seg.byteSize() + " (truncated?)");
            }
        }

        long u32(String field) {
            need(4, field);
            long v = Integer.toUnsignedLong(seg.get(INT_LE, pos));
            pos += 4;
            return v;
        }

        long u64(String field) {
            need(8, field);
            long v = seg.get(LONG_LE, pos);
            pos += 8;
            return v;
        }

        /** A count of items that each take at least {@code minBytes}: absurd counts fail before any loop. */
        long count(String field, long minBytes) {
            long n = u64(field);
            if (n < 0 || n > remaining() / minBytes) {
                throw new QlabException(source + ": " + field + " is " + Long.toUnsignedString(n)
                        + ", more than the " + remaining() + " remaining bytes can hold");
            }
            return n;
        }

        String string(String field) {
            long len = u64(field);
            if (len < 0 || len > remaining()) {
                throw new QlabException(source + ": " + field + " has string length "
                        + Long.toUnsignedString(len) + ", past the end of the file (" + remaining() + " bytes remain)");
            }
            if (len > Integer.MAX_VALUE - 16) {
                throw new QlabException(source + ": " + field + " has string length " + len + ", too long");
            }
            byte[] b = seg.asSlice(pos, len).toArray(ValueLayout.JAVA_BYTE);
            pos += len;
            try {
                return utf8.decode(java.nio.ByteBuffer.wrap(b)).toString();
            } catch (CharacterCodingException e) {
                throw new QlabException(source + ": " + field + " is not valid UTF-8");
            }
        }

        GgufValueType valueType(String key) {
            long id = u32(field(key) + " (its value type)");
            GgufValueType t = GgufValueType.ofId(id);
            if (t == null) {
                throw new QlabException(source + ": " + field(key) + " has value type " + id + ", not a GGUF type");
            }
            return t;
        }

        GgufValue value(String key, GgufValueType type, int depth) {
            switch (type) {
                case ARRAY -> {
                    GgufValueType element = valueType(key);
                    if (element == GgufValueType.ARRAY && depth >= MAX_ARRAY_DEPTH) {
                        throw new QlabException(source + ": " + field(key) + " nests arrays deeper than " + MAX_ARRAY_DEPTH);
                    }
                    long n = count(field(key) + " (its array length)", element.minBytes());
                    List<Object> items = new ArrayList<>((int) Math.min(n, 1 << 20));
                    for (long i = 0; i < n; i++) {
                        GgufValue v = element == GgufValueType.ARRAY ? value(key, element, depth + 1) : scalar(key, element);
                        items.add(element == GgufValueType.ARRAY ? v : v.value());
                    }
                    return new GgufValue(GgufValueType.ARRAY, element, Collections.unmodifiableList(items));
                }
                default -> {
                    return scalar(key, type);
                }
            }
        }

        GgufValue scalar(String key, GgufValueType type) {
            if (type == GgufValueType.STRING) {
                return GgufValue.of(type, string(field(key)));
            }
            need(type.size, field(key));
            Object v = switch (type) {
                case UINT8 -> (long) (seg.get(ValueLayout.JAVA_BYTE, pos) & 0xFF);
                case INT8 -> (long) seg.get(ValueLayout.JAVA_BYTE, pos);
                case UINT16 -> (long) (seg.get(SHORT_LE, pos) & 0xFFFF);
                case INT16 -> (long) seg.get(SHORT_LE, pos);
                case UINT32 -> Integer.toUnsignedLong(seg.get(INT_LE, pos));
                case INT32 -> (long) seg.get(INT_LE, pos);
                case UINT64, INT64 -> seg.get(LONG_LE, pos);
                case FLOAT32 -> (double) seg.get(FLOAT_LE, pos);
                case FLOAT64 -> seg.get(DOUBLE_LE, pos);
                case BOOL -> {
                    byte b = seg.get(ValueLayout.JAVA_BYTE, pos);
                    if (b != 0 && b != 1) {
                        throw new QlabException(source + ": " + field(key) + " is a BOOL of value " + b + ", expected 0 or 1");
                    }
                    yield b == 1;
                }
                default -> throw new IllegalStateException(type.name());
            };
            pos += type.size;
            return GgufValue.of(type, v);
        }

    }

    // ---------------------------------------------------------------- access

    /** The file (for messages). */
    /** A name read from the file, quoted with escapes: a corrupt one may hold line breaks, and an error is one line. */
    static String quoted(String name) {
        return new com.fasterxml.jackson.databind.node.TextNode(name).toString();
    }

    public String source() {
        return source;
    }

    public int version() {
        return version;
    }

    public int alignment() {
        return alignment;
    }

    /** Offset of the data section in the file. */
    public long dataStart() {
        return dataStart;
    }

    /** All metadata, in file order. */
    public Map<String, GgufValue> metadata() {
        return metadata;
    }

    /** All tensor infos, in file order. */
    public Map<String, GgufTensor> tensors() {
        return tensors;
    }

    public GgufTensor tensor(String name) {
        GgufTensor t = tensors.get(name);
        if (t == null) {
            throw new QlabException(source + ": no tensor \"" + name + "\"");
        }
        return t;
    }

    /** The stored bytes of a tensor, a read-only slice of the mapping. */
    public MemorySegment bytes(String name) {
        GgufTensor t = tensor(name);
        return data.asSlice(t.offset(), t.bytes());
    }

    /** A float tensor (F32, F16, BF16) widened exactly to f32. */
    public float[] floats(String name) {
        GgufTensor t = tensor(name);
        if (!t.type().isFloat()) {
            throw new QlabException(source + ": tensor \"" + name + "\": field \"type\" is " + t.type()
                    + ", expected F32, F16 or BF16");
        }
        if (t.elementCount() > Integer.MAX_VALUE - 8) {
            throw new QlabException(source + ": tensor \"" + name + "\" has " + t.elementCount() + " elements, more than one array holds");
        }
        MemorySegment s = bytes(name);
        float[] out = new float[(int) t.elementCount()];
        MappedFile.widen(s, switch (t.type().id()) {
            case 0 -> MappedFile.FloatKind.F32;
            case 1 -> MappedFile.FloatKind.F16;
            default -> MappedFile.FloatKind.BF16;
        }, out);
        return out;
    }

    // ---------------------------------------------------------------- typed metadata

    public boolean has(String key) {
        return metadata.containsKey(key);
    }

    private GgufValue require(String key) {
        GgufValue v = metadata.get(key);
        if (v == null) {
            throw new QlabException(source + ": " + field(key) + " is missing");
        }
        return v;
    }

    /** A string value. */
    public String string(String key) {
        GgufValue v = require(key);
        if (v.type() != GgufValueType.STRING) {
            throw new QlabException(source + ": " + field(key) + " is " + v.type() + ", expected STRING");
        }
        return (String) v.value();
    }

    /** An integer value of any integer type, as a long. */
    public long integer(String key) {
        GgufValue v = require(key);
        if (!v.type().isInteger()) {
            throw new QlabException(source + ": " + field(key) + " is " + v.type() + ", expected an integer");
        }
        return (Long) v.value();
    }

    /** A positive integer that fits an int, as counts and sizes must. */
    public int positiveInt(String key) {
        long v = integer(key);
        if (v <= 0 || v > Integer.MAX_VALUE) {
            throw new QlabException(source + ": " + field(key) + " is " + Long.toUnsignedString(v) + ", expected a positive count");
        }
        return (int) v;
    }

    /** A FLOAT32 or FLOAT64 value (an integer is accepted too). */
    public double number(String key) {
        GgufValue v = require(key);
        if (v.type() == GgufValueType.FLOAT32 || v.type() == GgufValueType.FLOAT64) {
            return (Double) v.value();
        }
        return integer(key);
    }

    public boolean bool(String key, boolean dflt) {
        GgufValue v = metadata.get(key);
        if (v == null) {
            return dflt;
        }
        if (v.type() != GgufValueType.BOOL) {
            throw new QlabException(source + ": " + field(key) + " is " + v.type() + ", expected BOOL");
        }
        return (Boolean) v.value();
    }

    /** An array of strings. */
    public List<String> strings(String key) {
        GgufValue v = require(key);
        if (v.type() != GgufValueType.ARRAY || v.elementType() != GgufValueType.STRING) {
            throw new QlabException(source + ": " + field(key) + " is " + v.type()
                    + (v.elementType() == null ? "" : " of " + v.elementType()) + ", expected an ARRAY of STRING");
        }
        @SuppressWarnings("unchecked")
        List<String> list = (List<String>) v.list();
        return list;
    }

    /** An array of integers (any integer element type) as ints. */
    public int[] ints(String key) {
        GgufValue v = require(key);
        if (v.type() != GgufValueType.ARRAY || v.elementType() == null || !v.elementType().isInteger()) {
            throw new QlabException(source + ": " + field(key) + " is " + v.type()
                    + (v.elementType() == null ? "" : " of " + v.elementType()) + ", expected an ARRAY of integers");
        }
        List<?> list = v.list();
        int[] out = new int[list.size()];
        for (int i = 0; i < out.length; i++) {
            long x = (Long) list.get(i);
            if (x != (int) x) {
                throw new QlabException(source + ": field \"" + key + "[" + i + "]\" is " + x + ", out of the int range");
            }
            out[i] = (int) x;
        }
        return out;
    }
}
