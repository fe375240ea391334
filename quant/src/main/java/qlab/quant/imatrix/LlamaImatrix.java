package qlab.quant.imatrix;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import qlab.engine.QlabException;
import qlab.engine.gguf.GgufArchitecture;
import qlab.engine.gguf.GgufFile;
import qlab.engine.gguf.GgufTensor;
import qlab.engine.gguf.GgufTensorType;
import qlab.engine.gguf.GgufValue;
import qlab.engine.gguf.GgufValueType;
import qlab.engine.gguf.GgufWriter;
import qlab.engine.util.MappedFile;
import qlab.quant.checkpoint.GgufCheckpoint;
import qlab.engine.util.IoErrors;
import qlab.engine.util.OutputPaths;

/**
 * An importance matrix in llama.cpp's terms, as {@code llama-imatrix} writes it, in either of its
 * two file formats:
 *
 * <ul>
 *   <li><b>GGUF</b> ({@code --output-format gguf}, the default): metadata {@code general.type} =
 *       "imatrix", {@code imatrix.datasets}, {@code imatrix.chunk_count}, {@code imatrix.chunk_size};
 *       per weight two F32 tensors, sorted by name: {@code <name>.in_sum2} ([ncols], the sum over
 *       tokens of the squared input) and {@code <name>.counts} ([1], the number of tokens).
 *   <li><b>legacy .dat</b>, little-endian: i32 n_entries; per entry i32 name length, name, i32
 *       ncall, i32 nval, f32[nval] = (in_sum2 / count) * ncall; then i32 chunk count and i32
 *       length + bytes of the dataset name.
 * </ul>
 *
 * Each entry keeps its stored sums and divisor (count or ncall), so a file read and written back
 * in its own format is the same bytes. What llama-quantize gives the quantizer, and what qlab's
 * {@link ImportanceMatrix} holds, is {@code sums[i] / (float) divisor}. Names are llama.cpp's
 * ({@code blk.0.attn_q.weight}); {@link #toQlab} and {@link #fromQlab} map them.
 *
 * @param entries per weight (by llama.cpp name, in file order): stored sums and divisor
 * @param datasets the calibration datasets named in the file
 */
public record LlamaImatrix(Map<String, Entry> entries, int chunkCount, int chunkSize, List<String> datasets,
        Map<String, String> qlabMetadata) {

    /** One weight's statistics: {@code sums[i] / divisor} is the mean squared input of channel i. */
    public record Entry(float[] sums, float divisor) {
        public float[] means() {
            float[] m = new float[sums.length];
            for (int i = 0; i < m.length; i++) {
                m[i] = sums[i] / divisor;
            }
            return m;
        }
    }

    private static final ValueLayout.OfInt INT_LE = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfFloat FLOAT_LE = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final String QLAB_KEY = "qlab.imatrix.";

    /** The file formats, as {@code calibrate --format} names them. */
    public enum Format { QLAB, GGUF, DAT;

        /** The format a file name suggests: .gguf, .dat, anything else qlab's own. */
        public static Format ofFileName(Path p) {
            String n = p.getFileName().toString();
            return n.endsWith(".gguf") ? GGUF : n.endsWith(".dat") ? DAT : QLAB;
        }
    }

    // ---------------------------------------------------------------- GGUF

    public static LlamaImatrix readGguf(Path path) {
        GgufFile f = GgufCheckpoint.open(path);
        String type = f.has("general.type") ? f.string("general.type") : null;
        if (!"imatrix".equals(type)) {
            throw new QlabException(path + ": field \"general.type\" is " + (type == null ? "missing" : "\"" + type + "\"")
                    + ", expected \"imatrix\" (not an importance matrix)");
        }
        Map<String, Entry> entries = new LinkedHashMap<>();
        for (GgufTensor t : f.tensors().values()) {
            if (t.name().endsWith(".in_sum2")) {
                String name = t.name().substring(0, t.name().length() - ".in_sum2".length());
                GgufTensor counts = f.tensors().get(name + ".counts");
                if (counts == null) {
                    throw new QlabException(path + ": tensor " + new com.fasterxml.jackson.databind.node.TextNode(t.name()) + " has no \"" + name + ".counts\"");
                }
                if (t.ne().length != 1 || !t.type().equals(GgufTensorType.F32) || counts.elementCount() != 1
                        || !counts.type().equals(GgufTensorType.F32)) {
                    throw new QlabException(path + ": tensor " + new com.fasterxml.jackson.databind.node.TextNode(t.name()) + ": field \"ne\" is " + Arrays.toString(t.ne())
                            + " " + t.type() + " with " + counts.elementCount() + " " + counts.type()
                            + " count(s); only one F32 vector and one F32 count per weight (no experts) are supported");
                }
                // llama-quantize rounds the count to an integer before dividing.
                float count = Math.round(f.floats(counts.name())[0]);
                if (!(count > 0)) {
                    throw new QlabException(path + ": tensor " + new com.fasterxml.jackson.databind.node.TextNode(counts.name()) + " is " + count + ", expected a positive token count");
                }
                entries.put(name, new Entry(f.floats(t.name()), count));
            } else if (!t.name().endsWith(".counts")) {
                throw new QlabException(path + ": tensor " + new com.fasterxml.jackson.databind.node.TextNode(t.name()) + " is neither <name>.in_sum2 nor <name>.counts");
            } else if (!f.tensors().containsKey(t.name().substring(0, t.name().length() - ".counts".length()) + ".in_sum2")) {
                throw new QlabException(path + ": tensor " + new com.fasterxml.jackson.databind.node.TextNode(t.name()) + " has no matching .in_sum2 tensor");
            }
        }
        Map<String, String> qlab = new LinkedHashMap<>();
        f.metadata().forEach((k, v) -> {
            if (k.startsWith(QLAB_KEY) && v.type() == GgufValueType.STRING) {
                qlab.put(k.substring(QLAB_KEY.length()), (String) v.value());
            }
        });
        return new LlamaImatrix(entries, f.has("imatrix.chunk_count") ? (int) f.integer("imatrix.chunk_count") : 0,
                f.has("imatrix.chunk_size") ? (int) f.integer("imatrix.chunk_size") : 0,
                f.has("imatrix.datasets") ? f.strings("imatrix.datasets") : List.of(), qlab);
    }

    public void writeGguf(Path out) {
        GgufWriter w = new GgufWriter(GgufFile.DEFAULT_ALIGNMENT);
        w.put("general.type", GgufValue.string("imatrix"));
        w.put("imatrix.datasets", GgufValue.array(GgufValueType.STRING, datasets));
        w.put("imatrix.chunk_count", GgufValue.u32(chunkCount));
        w.put("imatrix.chunk_size", GgufValue.u32(chunkSize));
        qlabMetadata.forEach((k, v) -> w.put(QLAB_KEY + k, GgufValue.string(v)));
        for (var e : new TreeMap<>(entries).entrySet()) {
            float[] s = e.getValue().sums();
            w.tensor(e.getKey() + ".in_sum2", new long[] {s.length}, GgufTensorType.F32, 4L * s.length, () -> GgufWriter.f32(s));
            w.tensor(e.getKey() + ".counts", new long[] {1}, GgufTensorType.F32, 4,
                    () -> GgufWriter.f32(new float[] {e.getValue().divisor()}));
        }
        w.write(out);
    }

    // ---------------------------------------------------------------- legacy .dat

    public static LlamaImatrix readDat(Path path) {
        MemorySegment s = MappedFile.map(path);
        long[] pos = {0};
        int n = datInt(s, pos, path, "n_entries");
        if (n < 0 || n > s.byteSize() / 12) {
            throw new QlabException(path + ": field \"n_entries\" is " + n + ", more than the file's " + s.byteSize() + " bytes hold");
        }
        Map<String, Entry> entries = new LinkedHashMap<>();
        for (int i = 0; i < n; i++) {
            String name = datString(s, pos, path, "entry #" + i + " name");
            int ncall = datInt(s, pos, path, name + ".ncall");
            int nval = datInt(s, pos, path, name + ".nval");
            if (ncall <= 0) {
                throw new QlabException(path + ": " + field(name + ".ncall") + " is " + ncall + ", expected a positive count");
            }
            if (nval <= 0 || nval > (s.byteSize() - pos[0]) / 4) {
                throw new QlabException(path + ": " + field(name + ".nval") + " is " + nval + ", past the end of the file (truncated?)");
            }
            float[] v = new float[nval];
            MemorySegment.copy(s, FLOAT_LE, pos[0], v, 0, nval);
            pos[0] += 4L * nval;
            if (entries.put(name, new Entry(v, ncall)) != null) {
                throw new QlabException(path + ": " + field(name) + " appears twice");
            }
        }
        int chunks = 0;
        List<String> datasets = new ArrayList<>();
        if (pos[0] < s.byteSize()) { // the trailer is optional in older files
            chunks = datInt(s, pos, path, "chunk count");
            datasets.add(datString(s, pos, path, "dataset name"));
        }
        if (pos[0] != s.byteSize()) {
            throw new QlabException(path + ": " + (s.byteSize() - pos[0]) + " bytes after the dataset name (not a llama.cpp .dat imatrix?)");
        }
        return new LlamaImatrix(entries, chunks, 0, datasets, Map.of());
    }

    /** A field's name as a message shows it: quoted and escaped, so a name read from the file cannot break the line. */
    private static String field(String name) {
        return "field " + new com.fasterxml.jackson.databind.node.TextNode(name);
    }

    private static int datInt(MemorySegment s, long[] pos, Path path, String field) {
        if (s.byteSize() - pos[0] < 4) {
            throw new QlabException(path + ": " + field(field) + " is past the end of the file (truncated?)");
        }
        int v = s.get(INT_LE, pos[0]);
        pos[0] += 4;
        return v;
    }

    private static String datString(MemorySegment s, long[] pos, Path path, String field) {
        int len = datInt(s, pos, path, field);
        if (len < 0 || len > s.byteSize() - pos[0]) {
            throw new QlabException(path + ": " + field(field) + " has length " + len + ", past the end of the file (truncated?)");
        }
        String v = new String(s.asSlice(pos[0], len).toArray(ValueLayout.JAVA_BYTE), StandardCharsets.UTF_8);
        pos[0] += len;
        return v;
    }

    public void writeDat(Path out) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        ByteBuffer four = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN);
        java.util.function.IntConsumer i32 = v -> b.write(four.clear().putInt(v).array(), 0, 4);
        i32.accept(entries.size());
        for (var e : new TreeMap<>(entries).entrySet()) {
            byte[] name = e.getKey().getBytes(StandardCharsets.UTF_8);
            i32.accept(name.length);
            b.write(name, 0, name.length);
            float ncall = e.getValue().divisor();
            if (ncall != (int) ncall) {
                throw new QlabException(out + ": entry \"" + e.getKey() + "\" has divisor " + ncall + ", the .dat format needs an integer ncall");
            }
            i32.accept((int) ncall);
            i32.accept(e.getValue().sums().length);
            for (float v : e.getValue().sums()) {
                i32.accept(Float.floatToRawIntBits(v));
            }
        }
        i32.accept(chunkCount);
        byte[] dataset = String.join(",", datasets).getBytes(StandardCharsets.UTF_8);
        i32.accept(dataset.length);
        b.write(dataset, 0, dataset.length);
        OutputPaths.prepareFile(out);
        Path tmp = out.resolveSibling(out.getFileName() + "." + ProcessHandle.current().pid() + ".tmp");
        try {
            Files.write(tmp, b.toByteArray());
            Files.move(tmp, out, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new QlabException(out + ": cannot write: " + IoErrors.why(e));
        }
    }

    // ---------------------------------------------------------------- to and from qlab

    /** qlab's name for a llama.cpp weight name, under every architecture qlab runs. */
    static Optional<String> qlabName(String ggufName) {
        for (GgufArchitecture a : GgufArchitecture.ALL) {
            Optional<String> n = a.qlabName(ggufName);
            if (n.isPresent()) {
                return n;
            }
        }
        return Optional.empty();
    }

    static Optional<String> ggufName(String qlabName) {
        for (GgufArchitecture a : GgufArchitecture.ALL) {
            Optional<String> n = a.ggufName(qlabName);
            if (n.isPresent()) {
                return n;
            }
        }
        return Optional.empty();
    }

    /** The matrix as qlab holds it: per weight (by qlab name) what llama-quantize would weigh with. */
    public ImportanceMatrix toQlab(Path source) {
        Map<String, float[]> values = new LinkedHashMap<>();
        long tokens = 0;
        for (var e : entries.entrySet()) {
            String name = qlabName(e.getKey()).orElseThrow(() -> new QlabException(source + ": entry \"" + e.getKey()
                    + "\" is not a weight of an architecture qlab runs"));
            values.put(name, e.getValue().means());
            tokens = Math.max(tokens, (long) e.getValue().divisor());
        }
        Map<String, String> meta = new LinkedHashMap<>();
        meta.put("format", ImportanceMatrix.FORMAT);
        meta.put("tokens", Long.toString(tokens));
        meta.put("texts", String.join(",", datasets));
        meta.put("model_hash", "");
        meta.put("ctx", Integer.toString(chunkSize));
        meta.putAll(qlabMetadata);
        return new ImportanceMatrix(values, meta);
    }

    /**
     * A qlab matrix in llama.cpp's terms. Each entry's divisor is the token count (GGUF) or the
     * chunk count (.dat), as llama-imatrix writes them, or a power of two near it: see
     * {@link #scaled}, which keeps {@code sums[i] / divisor} equal to qlab's value bit for bit.
     */
    public static LlamaImatrix fromQlab(ImportanceMatrix m, Format format) {
        long tokens = Math.max(1, m.tokens());
        int ctx = Integer.parseInt(m.metadata().getOrDefault("ctx", "0"));
        int chunks = ctx > 0 ? (int) Math.min(Integer.MAX_VALUE, (tokens + ctx - 1) / ctx) : 1;
        float divisor = format == Format.DAT ? chunks : tokens;
        Map<String, Entry> entries = new LinkedHashMap<>();
        for (var e : m.values().entrySet()) {
            String name = ggufName(e.getKey()).orElseThrow(() -> new QlabException("importance matrix: \"" + e.getKey()
                    + "\" has no llama.cpp name"));
            entries.put(name, scaled(e.getValue(), divisor));
        }
        Map<String, String> qlab = new LinkedHashMap<>(m.metadata());
        List<String> datasets = m.metadata().containsKey("texts") && !m.metadata().get("texts").isEmpty()
                ? List.of(m.metadata().get("texts").split(",")) : List.of();
        return new LlamaImatrix(entries, chunks, ctx, datasets, format == Format.GGUF ? qlab : Map.of());
    }

    /**
     * Sums with {@code sums[i] / divisor == means[i]} exactly: over {@code divisor} when a float
     * exists for every channel (often none does: the floats near means[i] * divisor can all divide
     * to a neighbour of means[i]), else over the power of two at or below it (scaling by it is
     * exact), else over 1.
     */
    static Entry scaled(float[] means, float divisor) {
        float power = Integer.highestOneBit(Math.max(1, (int) Math.min(divisor, 1 << 30)));
        for (float d : new float[] {divisor, power}) {
            float[] sums = new float[means.length];
            boolean exact = true;
            for (int i = 0; i < means.length && exact; i++) {
                float s = means[i] * d;
                if (s / d != means[i]) {
                    s = Math.nextUp(s) / d == means[i] ? Math.nextUp(s) : Math.nextDown(s);
                }
                exact = s / d == means[i] && Float.isFinite(s);
                sums[i] = s;
            }
            if (exact) {
                return new Entry(sums, d);
            }
        }
        return new Entry(means.clone(), 1f);
    }

    /**
     * Reads any of the three formats: GGUF (by its magic), legacy .dat (by its name), else qlab's own.
     */
    public static ImportanceMatrix load(Path path) {
        if (GgufCheckpoint.isGguf(path)) {
            return readGguf(path).toQlab(path);
        }
        if (Format.ofFileName(path) == Format.DAT) {
            return readDat(path).toQlab(path);
        }
        return ImportanceMatrix.load(path);
    }

    /** Writes {@code m} in {@code format}. */
    public static void save(ImportanceMatrix m, Format format, Path out) {
        switch (format) {
            case QLAB -> m.save(out);
            case GGUF -> fromQlab(m, format).writeGguf(out);
            case DAT -> fromQlab(m, format).writeDat(out);
        }
    }

}
