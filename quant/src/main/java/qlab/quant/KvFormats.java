package qlab.quant;

import java.lang.foreign.MemorySegment;
import java.util.List;
import qlab.engine.QlabException;
import qlab.engine.model.KvType;
import qlab.engine.model.KvTypes;
import qlab.quant.ggml.GgmlType;

/**
 * The KV cache types, llama.cpp's {@code -ctk}/{@code -ctv} set: f32 as the engine keeps it, and
 * the formats below encoded as their ggml blocks with their reference quantizers, and queries
 * rounded as ggml's CPU attention rounds them for keys of that type, so that a cache type costs the
 * same in both tools.
 */
public final class KvFormats {

    /** Every type a cache may take, f32 first. */
    public static final List<String> NAMES = List.of("f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "iq4_nl");

    private KvFormats() {}

    /** The type named {@code name} (case-insensitive); an unknown name is a one-line {@link QlabException}. */
    public static KvType named(String name) {
        String n = name.strip().toLowerCase(java.util.Locale.ROOT);
        if (n.equals("f32")) {
            return KvType.F32;
        }
        if (!NAMES.contains(n)) {
            throw new QlabException("unknown KV cache type \"" + name + "\"; valid types: " + String.join(", ", NAMES));
        }
        return new FormatKvType(Formats.byName(n));
    }

    /** Keys and values of the given types. */
    public static KvTypes of(String keys, String values) {
        return new KvTypes(named(keys), named(values));
    }

    /** A cache type stored in a quant format's rows, one row per KV head and position. */
    private static final class FormatKvType implements KvType {
        private final QuantFormat format;
        private final int blockSize;
        /** The type queries are rounded to for the dot product with these keys: ggml's vec_dot_type. */
        private final QuantFormat queryFormat;

        FormatKvType(QuantFormat format) {
            this.format = format;
            GgmlType t = format.ggml().orElseThrow(() -> new IllegalStateException(format.name() + " has no ggml type")).type();
            this.blockSize = t.blockSize;
            // f16 and bf16 keys take queries in their own type; every block type's dot product takes q8_0 blocks
            // (q8_1 for q4_1 and q5_1: the same values, with their sum stored beside them).
            this.queryFormat = blockSize == 1 ? format : Formats.byName("q8_0");
        }

        @Override
        public void roundQuery(float[] q, int off, int n) {
            byte[] b = new byte[Math.toIntExact(queryFormat.bytesPerRow(n))];
            MemorySegment seg = MemorySegment.ofArray(b);
            queryFormat.quantizeRow(q, off, n, null, seg, 0);
            queryFormat.dequantizeRow(seg, 0, n, q, off);
        }

        @Override
        public String name() {
            return format.name();
        }

        @Override
        public int blockSize() {
            return blockSize;
        }

        @Override
        public long bytesPerRow(int values) {
            return format.bytesPerRow(values);
        }

        @Override
        public void encode(float[] src, int srcOff, int n, byte[] dst, long dstOff) {
            format.quantizeRow(src, srcOff, n, null, MemorySegment.ofArray(dst), dstOff);
        }

        @Override
        public void decode(byte[] src, long srcOff, int n, float[] dst, int dstOff) {
            format.dequantizeRow(MemorySegment.ofArray(src), srcOff, n, dst, dstOff);
        }

        @Override
        public String toString() {
            return format.name();
        }
    }
}
