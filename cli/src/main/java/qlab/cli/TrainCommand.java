package qlab.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.OptionalDouble;
import java.util.concurrent.Callable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import qlab.engine.QlabException;
import qlab.engine.util.OutputPaths;
import qlab.engine.data.Datasets;
import qlab.engine.safetensors.DType;
import qlab.engine.train.TrainOptions;
import qlab.engine.train.TrainPreset;
import qlab.engine.train.TrainRun;
import qlab.engine.train.Trainer;
import qlab.pipeline.report.LossCurveChart;

@Command(name = "train", mixinStandardHelpOptions = true,
        description = "Train a Qwen2-architecture model from scratch into a Hugging Face model directory"
            + " (deterministic; --resume continues a killed run bit for bit; docs/train.md).",
        footer = {"", "Example:",
            "  ./qlab train --preset tiny --vocab 2048 --steps 200 --batch-tokens 4096 --seq-len 128 \\",
            "      --out models/tiny-trained"})
final class TrainCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    static final class ShapeChoice {
        @Option(names = "--preset", paramLabel = "NAME", description = "Model shape: tiny, s, m or l (vocabulary from the tokenizer).")
        String preset;

        @Option(names = "--config", paramLabel = "FILE", description = "A Qwen2 config.json giving the shape.")
        Path config;
    }

    @ArgGroup(exclusive = true, multiplicity = "1")
    ShapeChoice shape;

    static final class TokenizerChoice {
        @Option(names = "--tokenizer", paramLabel = "DIR", description = "Use this tokenizer.json (or the one in DIR).")
        Path dir;

        @Option(names = "--vocab", paramLabel = "N", description = "Train a byte-level BPE of at most N tokens on the training text.")
        Integer vocab;
    }

    @ArgGroup(exclusive = true, multiplicity = "1")
    TokenizerChoice tokenizer;

    @Option(names = "--data", paramLabel = "FILE", arity = "1..*",
            description = "Training text files (default: the train split of the checkout's datasets/). The last 2%% of each is held out for validation.")
    List<Path> data = new ArrayList<>();

    @Option(names = "--steps", defaultValue = "1000", description = "Optimizer steps (default: ${DEFAULT-VALUE}).")
    int steps;

    @Option(names = "--batch-tokens", defaultValue = "8192", description = "Tokens per step, whole sequences (default: ${DEFAULT-VALUE}).")
    int batchTokens;

    @Option(names = "--seq-len", defaultValue = "256", description = "Positions per sequence (default: ${DEFAULT-VALUE}).")
    int seqLen;

    @Option(names = "--lr", defaultValue = "3e-3", description = "Peak learning rate (default: ${DEFAULT-VALUE}).")
    double lr;

    @Option(names = "--warmup", defaultValue = "100", description = "Steps of linear warm-up (default: ${DEFAULT-VALUE}); then cosine decay.")
    int warmup;

    @Option(names = "--min-lr-ratio", defaultValue = "0.1", description = "The decay ends at lr times this (default: ${DEFAULT-VALUE}).")
    double minLrRatio;

    @Option(names = "--weight-decay", defaultValue = "0.1", description = "AdamW weight decay on matrices (default: ${DEFAULT-VALUE}).")
    double weightDecay;

    @Option(names = "--clip", defaultValue = "1.0", description = "Global gradient-norm clip (default: ${DEFAULT-VALUE}).")
    double clip;

    @Option(names = "--seed", defaultValue = "1", description = "Initial weights and batch order (default: ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--threads", paramLabel = "T", description = "Worker threads (default: all cores); results do not depend on it.")
    Integer threads;

    @Option(names = "--out", required = true, paramLabel = "DIR", description = "Output model directory.")
    Path out;

    @Option(names = "--resume", description = "Continue the run whose checkpoint is in --out (same options and data).")
    boolean resume;

    @Option(names = "--dtype", defaultValue = "bf16", description = "Weights written: bf16 (default) or f32.")
    String dtype;

    @Option(names = "--weights", defaultValue = "best", description = "Weights written: best (default: those after the "
            + "step with the lowest validation loss) or last (those after the last step).")
    String weights;

    @Option(names = "--eval-every", defaultValue = "100", description = "Steps between validation losses (default: ${DEFAULT-VALUE}).")
    int evalEvery;

    @Option(names = "--eval-tokens", defaultValue = "16384", description = "Validation tokens scored each time (default: ${DEFAULT-VALUE}).")
    int evalTokens;

    @Option(names = "--checkpoint-every", defaultValue = "100", description = "Steps between checkpoints (default: ${DEFAULT-VALUE}).")
    int checkpointEvery;

    @Option(names = "--micro-tokens", defaultValue = "2048", description = "Tokens per forward/backward pass; bounds memory (default: ${DEFAULT-VALUE}).")
    int microTokens;

    @Option(names = "--log-every", defaultValue = "10", description = "Steps between progress lines (default: ${DEFAULT-VALUE}).")
    int logEvery;

    @Option(names = "--peak-gmacs", paramLabel = "G",
            description = "The machine's f32 FMA peak in G multiply-adds/s for the fraction-of-peak figure (default: measured at start).")
    Double peakGmacs;

    @Override
    public Integer call() throws IOException {
        var err = spec.commandLine().getErr();
        if (logEvery < 1) {
            throw new QlabException("train: --log-every must be positive, got " + logEvery);
        }
        OutputPaths.checkDirectory(out);
        TrainRun.Request request = request();
        TrainRun.Result r = TrainRun.run(request, (trainer, p, eval) -> {
            if (p.step() % logEvery == 0 || eval != null || p.step() == 1 || p.step() == trainer.options().steps()) {
                err.println(progressLine(trainer, p, eval));
            }
        }, line -> err.println(line));

        List<LossCurveChart.Point> train = r.trainer().history().stream()
                .map(p -> new LossCurveChart.Point(p.step(), p.trainLoss())).toList();
        List<LossCurveChart.Point> val = r.trainer().evals().stream()
                .map(e -> new LossCurveChart.Point(e.step(), e.valLoss())).toList();
        LossCurveChart.write(out, "loss", "Training loss", train, val, Math.max(1, Math.min(50, steps / 10)));

        Trainer tr = r.trainer();
        double productRate = tr.productNanos() > 0 ? tr.productMacs() / (tr.productNanos() / 1e9) : 0;
        spec.commandLine().getOut().printf(Locale.ROOT,
                "wrote %s: %d steps in %.1f s, %.0f tokens/s; products %.1f G multiply-adds/s = %.0f%% of the %.1f G FMA peak%n",
                out, tr.step(), r.wallNanos() / 1e9, tr.tokensPerSecond(), productRate / 1e9,
                100 * productRate / r.peakMacs(), r.peakMacs() / 1e9);
        return 0;
    }

    /** The run the options describe (the options checked, the data files found). */
    TrainRun.Request request() {
        TrainOptions options = new TrainOptions(steps, batchTokens, seqLen, lr, warmup, weightDecay, seed, minLrRatio,
                clip, evalEvery, evalTokens, checkpointEvery, Math.min(microTokens, batchTokens));
        TrainRun.Shape s = shape.preset != null ? new TrainRun.Shape(TrainPreset.byId(shape.preset), null)
                : new TrainRun.Shape(null, shape.config);
        int t = threads == null ? Runtime.getRuntime().availableProcessors() : threads;
        if (t < 1) {
            throw new QlabException("train: --threads must be at least 1, got " + t);
        }
        DType d = switch (dtype.toLowerCase(Locale.ROOT)) {
            case "bf16" -> DType.BF16;
            case "f32" -> DType.F32;
            default -> throw new QlabException("train: --dtype is \"" + dtype + "\"; use bf16 or f32");
        };
        boolean best = switch (weights.toLowerCase(Locale.ROOT)) {
            case "best" -> true;
            case "last" -> false;
            default -> throw new QlabException("train: --weights is \"" + weights + "\"; use best or last");
        };
        return new TrainRun.Request(s, dataFiles(), tokenizer.dir, tokenizer.vocab, options, t, out, resume, d,
                peakGmacs == null ? OptionalDouble.empty() : OptionalDouble.of(peakGmacs * 1e9), best);
    }

    private List<Path> dataFiles() {
        if (!data.isEmpty()) {
            return data;
        }
        Datasets ds = Datasets.ofCheckout().orElseThrow(() -> new QlabException(
                "train: --data is not given and no datasets/ checkout was found (run through ./qlab, or name the files)"));
        List<Path> files = new ArrayList<>();
        for (Datasets.Entry e : ds.purpose("training")) {
            e.read(); // checks size and hash against the manifest
            files.add(e.path());
        }
        if (files.isEmpty()) {
            throw new QlabException(ds.dir().resolve("manifest.json") + ": no entry has \"purpose\": \"training\"");
        }
        return files;
    }

    static String progressLine(Trainer t, Trainer.Point p, Trainer.Eval eval) {
        double eta = t.etaSeconds();
        return String.format(Locale.ROOT, "step %d/%d  loss %.4f  val %s  lr %.2e  %.0f tok/s  ETA %s",
                p.step(), t.options().steps(), p.trainLoss(), eval == null ? "-" : String.format(Locale.ROOT, "%.4f", eval.valLoss()),
                p.lr(), t.tokensPerSecond(), Double.isNaN(eta) ? "-" : duration(eta));
    }

    static String duration(double seconds) {
        long s = Math.round(seconds);
        return s >= 3600 ? String.format(Locale.ROOT, "%dh%02dm", s / 3600, s / 60 % 60)
                : String.format(Locale.ROOT, "%dm%02ds", s / 60, s % 60);
    }
}
