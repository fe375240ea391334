package qlab.pipeline;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Sweep files for tests, with the small text files they refer to. */
public final class SweepFiles {

    private SweepFiles() {
    }

    /** Writes {@code eval.txt}, {@code calib.txt} and {@code name} (the given YAML) into {@code dir}. */
    public static Path write(Path dir, String name, String yaml) throws IOException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("eval.txt"), "The quick brown fox jumps over the lazy dog.\n".repeat(20));
        Files.writeString(dir.resolve("calib.txt"), "Calibration text about weights and scales.\n".repeat(20));
        Path file = dir.resolve(name);
        Files.writeString(file, yaml);
        return file;
    }

    /** A matrix of 34 distinct configs, 8 of them impossible (q4_8 takes group size 128 only). */
    public static final String MATRIX = """
            qlab_sweep: 1
            name: test
            model:
              preset: tiny
              seed: 7
            formats:
              - f32
              - q8_0
              - q4_0
              - q4_8
              - q4_8+attn=q8_0
            group_sizes: [32, 128]
            threads: [1, 2]
            imatrix: [none, cal]
            calibration:
              cal: [calib.txt]
            evaluation:
              text: eval.txt
              ctx: 64
              tokens: 256
            measurements: [quality, throughput, batch]
            throughput:
              prefill_tokens: 16
              decode_tokens: 8
              repeats: 3
              batch_sizes: [1, 4]
            """;
}
