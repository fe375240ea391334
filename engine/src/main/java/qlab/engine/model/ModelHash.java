package qlab.engine.model;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;
import qlab.engine.QlabException;

/**
 * SHA-256 of a model's content: config.json and the weights it loads (model.safetensors, or the
 * shard index and the shards it names), by name and bytes; or of one file. Other files beside them
 * (a quantized checkpoint written into the model's directory) do not change it. Caches keyed by it stay valid exactly as long as the weights
 * do. Memoised per process by path, size and modification time.
 */
public final class ModelHash {

    private static final Map<String, String> MEMO = new ConcurrentHashMap<>();

    private ModelHash() {}

    public static String of(Path path) {
        List<Path> files = Files.isDirectory(path) ? modelFiles(path) : List.of(path);
        if (files.isEmpty()) {
            throw new QlabException(path + ": no model files to hash");
        }
        StringBuilder memoKey = new StringBuilder();
        try {
            for (Path f : files) {
                memoKey.append(f.toAbsolutePath()).append(':').append(Files.size(f)).append(':')
                        .append(Files.getLastModifiedTime(f).toMillis()).append(';');
            }
        } catch (IOException e) {
            throw new QlabException(path + ": cannot stat: " + e.getMessage());
        }
        return MEMO.computeIfAbsent(memoKey.toString(), k -> digest(files));
    }

    /** config.json and the weight files a directory's model is loaded from, sorted by name. */
    private static List<Path> modelFiles(Path dir) {
        java.util.TreeSet<Path> files = new java.util.TreeSet<>();
        Path config = dir.resolve("config.json");
        if (Files.isRegularFile(config)) {
            files.add(config);
        }
        Path index = dir.resolve("model.safetensors.index.json");
        Path single = dir.resolve("model.safetensors");
        if (Files.isRegularFile(index)) {
            files.add(index);
            try {
                com.fasterxml.jackson.databind.JsonNode map = new com.fasterxml.jackson.databind.ObjectMapper()
                        .readTree(index.toFile()).path("weight_map");
                map.elements().forEachRemaining(shard -> files.add(dir.resolve(shard.asText())));
            } catch (IOException e) {
                throw new QlabException(index + ": cannot read the shard index: " + e.getMessage());
            }
        } else if (Files.isRegularFile(single)) {
            files.add(single);
        } else {
            try (Stream<Path> s = Files.list(dir)) {
                s.filter(p -> p.getFileName().toString().endsWith(".safetensors")).forEach(files::add);
            } catch (IOException e) {
                throw new QlabException(dir + ": cannot list: " + e.getMessage());
            }
        }
        return new ArrayList<>(files);
    }

    private static String digest(List<Path> files) {
        try {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            byte[] buf = new byte[1 << 20];
            for (Path f : files) {
                md.update(f.getFileName().toString().getBytes(java.nio.charset.StandardCharsets.UTF_8));
                md.update((byte) 0);
                try (InputStream in = Files.newInputStream(f)) {
                    for (int n; (n = in.read(buf)) > 0; ) {
                        md.update(buf, 0, n);
                    }
                }
            }
            return HexFormat.of().formatHex(md.digest());
        } catch (IOException e) {
            throw new QlabException("cannot read model files for hashing: " + e.getMessage());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** SHA-256 of any strings, joined unambiguously. */
    public static String ofStrings(String... parts) {
        try {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            for (String p : parts) {
                md.update(p.getBytes(java.nio.charset.StandardCharsets.UTF_8));
                md.update((byte) 0);
            }
            return HexFormat.of().formatHex(md.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** SHA-256 of a token sequence. */
    public static String ofTokens(int[] tokens) {
        try {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(tokens.length * 4).order(java.nio.ByteOrder.LITTLE_ENDIAN);
            b.asIntBuffer().put(tokens);
            md.update(b.array());
            return HexFormat.of().formatHex(md.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
