package qlab.cli;

import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;
import qlab.engine.synthetic.SyntheticCheckpoint;
import qlab.engine.synthetic.SyntheticPreset;

@Command(name = "gen", mixinStandardHelpOptions = true,
        description = "Write a deterministic synthetic Qwen2 checkpoint (Hugging Face layout, BF16).")
final class GenCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--preset", required = true, description = "qwen2.5-0.5b, small or tiny.")
    String preset;

    @Option(names = "--seed", defaultValue = "1", description = "Seed (default: ${DEFAULT-VALUE}); same seed, same bytes.")
    long seed;

    @Option(names = "--out", required = true, description = "Output model directory.")
    Path out;

    @Override
    public Integer call() {
        SyntheticPreset p = SyntheticPreset.byId(preset);
        long t0 = System.nanoTime();
        new SyntheticCheckpoint(p.config(), seed).write(out);
        spec.commandLine().getErr().printf("wrote %s (%s, seed %d, %,d parameters) in %.1f s%n", out, p.id(), seed,
                p.config().parameterCount(), (System.nanoTime() - t0) / 1e9);
        return 0;
    }
}
