package qlab.engine.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A model's hash follows the files it is loaded from, not what else lies in its directory. */
class ModelHashTest {

    @TempDir
    Path dir;

    @Test
    void filesBesideTheModelDoNotChangeItsHash() throws IOException {
        Path m = Files.createDirectories(dir.resolve("m"));
        Files.writeString(m.resolve("config.json"), "{\"a\": 1}");
        Files.write(m.resolve("model.safetensors"), new byte[] {1, 2, 3});
        String hash = ModelHash.of(m);
        Files.write(m.resolve("q4_0.safetensors"), new byte[] {9, 9});
        Files.writeString(m.resolve("tokenizer.json"), "{}");
        assertEquals(hash, ModelHash.of(m), "a quantized file written beside the model");
        Files.write(m.resolve("model.safetensors"), new byte[] {1, 2, 4});
        assertNotEquals(hash, ModelHash.of(m), "the weights changed");
    }

    @Test
    void aShardedModelIsItsIndexAndTheShardsItNames() throws IOException {
        Path m = Files.createDirectories(dir.resolve("sharded"));
        Files.writeString(m.resolve("config.json"), "{\"a\": 1}");
        Files.writeString(m.resolve("model.safetensors.index.json"),
                "{\"weight_map\": {\"x\": \"model-00001-of-00002.safetensors\", \"y\": \"model-00002-of-00002.safetensors\"}}");
        Files.write(m.resolve("model-00001-of-00002.safetensors"), new byte[] {1});
        Files.write(m.resolve("model-00002-of-00002.safetensors"), new byte[] {2});
        String hash = ModelHash.of(m);
        Files.write(m.resolve("extra.safetensors"), new byte[] {3});
        assertEquals(hash, ModelHash.of(m));
        Files.write(m.resolve("model-00002-of-00002.safetensors"), new byte[] {5});
        assertNotEquals(hash, ModelHash.of(m), "a shard changed");
    }
}
