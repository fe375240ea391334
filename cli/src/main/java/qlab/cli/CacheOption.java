package qlab.cli;

import java.nio.file.Path;
import picocli.CommandLine.Option;

/** Where computed artefacts (reference log-probs, quantized checkpoints) are kept between runs. */
final class CacheOption {

    @Option(names = "--cache", paramLabel = "DIR",
            description = "Cache directory (default: $QLAB_CACHE or .qlab-cache).")
    Path cache;

    Path dir() {
        if (cache != null) {
            return cache;
        }
        String env = System.getenv("QLAB_CACHE");
        return Path.of(env != null && !env.isBlank() ? env : ".qlab-cache");
    }
}
