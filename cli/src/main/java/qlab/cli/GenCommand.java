package qlab.cli;

import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import qlab.engine.data.Datasets;
import qlab.engine.util.OutputPaths;
import qlab.engine.synthetic.SyntheticModelDirectory;
import qlab.engine.synthetic.SyntheticPreset;

@Command(name = "gen", mixinStandardHelpOptions = true,
        description = "Write a deterministic synthetic model (Qwen2, Llama or Qwen3; Hugging Face layout, BF16, with a trained tokenizer).",
        footer = {"", "Example:", "  ./qlab gen --preset qwen2.5-0.5b --seed 1 --out models/q05b"})
final class GenCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--preset", required = true, description = "tiny, tiny-llama, tiny-qwen3, small, qwen2.5-0.5b, llama3.2-1b or qwen3-0.6b.")
    String preset;

    @Option(names = "--seed", defaultValue = "1", description = "Seed (default: ${DEFAULT-VALUE}); same seed, same bytes.")
    long seed;

    @Option(names = "--out", required = true, description = "Output model directory.")
    Path out;

    @Option(names = "--no-tokenizer", description = "Write only config.json and model.safetensors.")
    boolean noTokenizer;

    @Override
    public Integer call() {
        SyntheticPreset p = SyntheticPreset.byId(preset);
        OutputPaths.checkDirectory(out);
        long t0 = System.nanoTime();
        var datasets = noTokenizer ? java.util.Optional.<Datasets>empty() : Datasets.ofCheckout();
        if (!noTokenizer && datasets.isEmpty()) {
            spec.commandLine().getErr().println("note: datasets/ not found (run through ./qlab); writing no tokenizer");
        }
        var written = SyntheticModelDirectory.write(p, seed, out, datasets);
        spec.commandLine().getErr().printf("wrote %s (%s, seed %d, %,d parameters, %s) in %.1f s%n", out, p.id(), seed,
                p.config().parameterCount(),
                written.tokenizerSize().map(n -> "tokenizer of " + n + " tokens trained on datasets/calib").orElse("no tokenizer"),
                (System.nanoTime() - t0) / 1e9);
        return 0;
    }
}
