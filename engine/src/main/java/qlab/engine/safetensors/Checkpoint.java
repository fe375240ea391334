package qlab.engine.safetensors;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import qlab.engine.QlabException;
import qlab.engine.util.JsonErrors;

/**
 * The tensors of a model, from one safetensors file or from the shards listed in
 * {@code model.safetensors.index.json} (its {@code weight_map} names the shard of each tensor).
 */
public final class Checkpoint {

    public static final String SINGLE = "model.safetensors";
    public static final String INDEX = "model.safetensors.index.json";

    private final Path source;
    private final Map<String, SafetensorsFile> fileOf;
    private final Map<String, TensorInfo> tensors;
    private final Map<String, SafetensorsFile> files;

    private Checkpoint(Path source, Map<String, SafetensorsFile> fileOf, Map<String, SafetensorsFile> files) {
        this.source = source;
        this.fileOf = fileOf;
        this.files = files;
        Map<String, TensorInfo> all = new TreeMap<>();
        fileOf.forEach((name, f) -> all.put(name, f.info(name)));
        this.tensors = Collections.unmodifiableMap(all);
    }

    /** A model directory (single file or sharded) or one .safetensors file. */
    public static Checkpoint open(Path path) {
        if (Files.isRegularFile(path)) {
            return single(path);
        }
        if (!Files.isDirectory(path)) {
            throw new QlabException(path + ": not found");
        }
        Path index = path.resolve(INDEX);
        if (Files.isRegularFile(index)) {
            return sharded(index);
        }
        Path single = path.resolve(SINGLE);
        if (Files.isRegularFile(single)) {
            return single(single);
        }
        throw new QlabException(path + ": no " + SINGLE + " or " + INDEX + " in the model directory");
    }

    private static Checkpoint single(Path file) {
        SafetensorsFile f = SafetensorsFile.open(file);
        Map<String, SafetensorsFile> fileOf = new LinkedHashMap<>();
        for (String name : f.tensors().keySet()) {
            fileOf.put(name, f);
        }
        return new Checkpoint(file, fileOf, Map.of(file.getFileName().toString(), f));
    }

    private static Checkpoint sharded(Path index) {
        JsonNode root;
        try {
            root = new ObjectMapper().readTree(Files.readString(index));
        } catch (JacksonException e) {
            throw new QlabException(index + ": not valid JSON" + JsonErrors.where(e) + ": " + JsonErrors.why(e));
        } catch (IOException e) {
            throw new QlabException(index + ": cannot read: " + e.getMessage());
        }
        JsonNode map = root == null ? null : root.get("weight_map");
        if (map == null || !map.isObject()) {
            throw new QlabException(index + ": field \"weight_map\" is missing or not an object");
        }
        Map<String, SafetensorsFile> files = new LinkedHashMap<>();
        Map<String, SafetensorsFile> fileOf = new LinkedHashMap<>();
        Path dir = index.getParent();
        for (Iterator<Map.Entry<String, JsonNode>> it = map.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (!e.getValue().isTextual()) {
                throw new QlabException(index + ": field \"weight_map." + e.getKey() + "\" must be a file name");
            }
            String shard = e.getValue().textValue();
            Path shardPath = dir.resolve(shard).normalize();
            if (!shardPath.startsWith(dir.normalize())) {
                throw new QlabException(index + ": field \"weight_map." + e.getKey() + "\" points outside the model directory");
            }
            SafetensorsFile f = files.computeIfAbsent(shard, s -> SafetensorsFile.open(shardPath));
            if (!f.tensors().containsKey(e.getKey())) {
                throw new QlabException(index + ": field \"weight_map." + e.getKey() + "\" names shard " + shard
                        + ", which has no such tensor");
            }
            fileOf.put(e.getKey(), f);
        }
        for (var f : files.values()) {
            for (String name : f.tensors().keySet()) {
                if (fileOf.get(name) != f) {
                    throw new QlabException(f.path() + ": tensor \"" + name + "\" is not listed in " + INDEX
                            + (fileOf.containsKey(name) ? " for this shard (it appears in two shards)" : ""));
                }
            }
        }
        return new Checkpoint(index.getParent(), fileOf, files);
    }

    /** The model directory or the file given. */
    public Path source() {
        return source;
    }

    /** All tensors, sorted by name. */
    public Map<String, TensorInfo> tensors() {
        return tensors;
    }

    /** The shard files, by file name. */
    public Map<String, SafetensorsFile> files() {
        return files;
    }

    /** Metadata of the first file (a sharded checkpoint repeats it per shard). */
    public Map<String, String> metadata() {
        return files.values().iterator().next().metadata();
    }

    public boolean has(String name) {
        return fileOf.containsKey(name);
    }

    public TensorInfo info(String name) {
        return file(name).info(name);
    }

    public float[] floats(String name) {
        return file(name).floats(name);
    }

    public MemorySegment bytes(String name) {
        return file(name).bytes(name);
    }

    public SafetensorsFile file(String name) {
        SafetensorsFile f = fileOf.get(name);
        if (f == null) {
            throw new QlabException(source + ": no tensor \"" + name + "\"");
        }
        return f;
    }

    /** Total bytes of tensor data. */
    public long dataBytes() {
        long total = 0;
        for (TensorInfo t : tensors.values()) {
            total += t.byteLength();
        }
        return total;
    }
}
