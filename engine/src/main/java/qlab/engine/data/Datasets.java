package qlab.engine.data;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import qlab.engine.QlabException;

/**
 * The project's evaluation and calibration texts ({@code datasets/} in the checkout), read through
 * {@code datasets/manifest.json}; every file is checked against the size and SHA-256 recorded
 * there before it is used, so a measurement never runs on text other than the one it names.
 */
public final class Datasets {

    /** One manifest entry. */
    public record Entry(String name, Path path, String kind, String purpose, long bytes, String sha256) {
        /** The text, after checking its size and hash. */
        public String read() {
            byte[] data;
            try {
                data = Files.readAllBytes(path);
            } catch (IOException e) {
                throw new QlabException(path + ": cannot read dataset \"" + name + "\": " + e.getMessage());
            }
            String actual = Datasets.sha256(data);
            if (data.length != bytes || !actual.equals(sha256)) {
                throw new QlabException(path + ": dataset \"" + name + "\" does not match manifest.json (" + data.length
                        + " bytes, sha256 " + actual + "; the manifest says " + bytes + " bytes, " + sha256 + ")");
            }
            return new String(data, java.nio.charset.StandardCharsets.UTF_8);
        }
    }

    private final Path dir;
    private final List<Entry> entries;

    private Datasets(Path dir, List<Entry> entries) {
        this.dir = dir;
        this.entries = entries;
    }

    /** The datasets of the qlab checkout (system property qlab.home or env QLAB_HOME), if present. */
    public static Optional<Datasets> ofCheckout() {
        String home = System.getProperty("qlab.home", System.getenv("QLAB_HOME"));
        if (home == null) {
            return Optional.empty();
        }
        Path dir = Path.of(home).resolve("datasets");
        return Files.isRegularFile(dir.resolve("manifest.json")) ? Optional.of(open(dir)) : Optional.empty();
    }

    public static Datasets open(Path dir) {
        Path manifest = dir.resolve("manifest.json");
        JsonNode root;
        try {
            root = new ObjectMapper().readTree(manifest.toFile());
        } catch (IOException e) {
            throw new QlabException(manifest + ": cannot read: " + e.getMessage());
        }
        if (root == null || !root.isArray()) {
            throw new QlabException(manifest + ": expected a JSON array of entries");
        }
        List<Entry> list = new ArrayList<>();
        for (int i = 0; i < root.size(); i++) {
            JsonNode e = root.get(i);
            for (String field : new String[] {"name", "path", "kind", "purpose", "bytes", "sha256"}) {
                if (!e.hasNonNull(field)) {
                    throw new QlabException(manifest + ": entry " + i + ": field \"" + field + "\" is missing");
                }
            }
            list.add(new Entry(e.get("name").asText(), dir.resolve(e.get("path").asText()), e.get("kind").asText(),
                    e.get("purpose").asText(), e.get("bytes").asLong(), e.get("sha256").asText()));
        }
        return new Datasets(dir, List.copyOf(list));
    }

    public Path dir() {
        return dir;
    }

    public List<Entry> entries() {
        return entries;
    }

    /** Entries with this purpose ("evaluation" or "calibration"). */
    public List<Entry> purpose(String purpose) {
        return entries.stream().filter(e -> e.purpose().equals(purpose)).toList();
    }

    public Entry byName(String name) {
        return entries.stream().filter(e -> e.name().equals(name)).findFirst().orElseThrow(() -> new QlabException(
                dir.resolve("manifest.json") + ": no dataset named \"" + name + "\"; known: "
                        + String.join(", ", entries.stream().map(Entry::name).toList())));
    }

    public static String sha256(byte[] data) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(data));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
