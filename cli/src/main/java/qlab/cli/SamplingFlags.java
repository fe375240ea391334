package qlab.cli;

import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import picocli.CommandLine.Option;
import qlab.engine.sampling.GenerationDefaults;
import qlab.engine.sampling.SamplingConfig;
import qlab.engine.sampling.SamplingOptions;

/** Sampling flags (transformers' meanings), and the model's generation_config.json on request. */
final class SamplingFlags {

    @Option(names = "--temperature", description = "Sampling temperature; 0 = greedy (default: greedy).")
    Double temperature;

    @Option(names = "--top-k", description = "Keep the k most likely tokens (ties at the boundary kept).")
    Integer topK;

    @Option(names = "--top-p", description = "Nucleus: keep the smallest set with probability >= p.")
    Double topP;

    @Option(names = "--min-p", description = "Drop tokens less likely than min-p times the most likely one.")
    Double minP;

    @Option(names = "--repetition-penalty", description = "Penalty for tokens already in the sequence (1 = none).")
    Double repetitionPenalty;

    @Option(names = "--seed", defaultValue = "0", description = "Random seed; a seed reproduces a text exactly (default: ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--model-defaults", description = "Apply the model's generation_config.json; flags override it.")
    boolean modelDefaults;

    SamplingOptions explicit() {
        return new SamplingOptions(null, temperature, topK, topP, minP, repetitionPenalty, null);
    }

    /** The sampler settings; prints which model defaults were applied (to err) when asked for. */
    SamplingConfig resolve(Path model, PrintWriter err) {
        SamplingOptions options = explicit();
        if (modelDefaults) {
            Path dir = Files.isDirectory(model) ? model : model.toAbsolutePath().getParent();
            var defaults = GenerationDefaults.readFromModelDirectory(dir);
            if (defaults.isPresent()) {
                err.println(defaults.get().describeApplied(options));
                options = defaults.get().applyTo(options);
            } else {
                err.println("model defaults: no " + GenerationDefaults.FILE_NAME + " in " + dir + "; none applied");
            }
        }
        return options.toConfig(seed);
    }
}
