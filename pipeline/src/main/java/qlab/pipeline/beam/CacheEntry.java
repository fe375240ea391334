package qlab.pipeline.beam;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The size and SHA-256 of a cached file, recorded in its metadata when it is built and checked
 * before it is used: a file cut short (a full disk, a killed copy) or with flipped bytes is
 * rebuilt, never measured. Hashing reads the file once, far less than measuring it.
 */
final class CacheEntry {

    static final String SIZE = "size";
    static final String SHA256 = "sha256";

    private CacheEntry() {}

    /** The fields to record for {@code file}. */
    static Map<String, Object> describe(Path file) throws IOException {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put(SIZE, Files.size(file));
        m.put(SHA256, sha256(file));
        return m;
    }

    /** Whether {@code file} is still what {@code meta} recorded; metadata without the fields is not trusted. */
    static boolean intact(Path file, JsonNode meta) throws IOException {
        JsonNode size = meta.get(SIZE);
        JsonNode hash = meta.get(SHA256);
        return size != null && hash != null && Files.isRegularFile(file)
                && Files.size(file) == size.asLong() && sha256(file).equals(hash.asText());
    }

    static String sha256(Path file) throws IOException {
        MessageDigest md;
        try {
            md = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        byte[] buf = new byte[1 << 20];
        try (InputStream in = Files.newInputStream(file)) {
            for (int n; (n = in.read(buf)) > 0; ) {
                md.update(buf, 0, n);
            }
        }
        return HexFormat.of().formatHex(md.digest());
    }
}
