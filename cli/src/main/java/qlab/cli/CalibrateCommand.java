package qlab.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import qlab.engine.QlabException;
import qlab.engine.model.Model;
import qlab.engine.model.ModelHash;
import qlab.engine.model.Transformer;
import qlab.engine.util.WorkerPool;
import qlab.quant.imatrix.ImportanceMatrix;
import qlab.quant.imatrix.LlamaImatrix;

@Command(name = "calibrate", mixinStandardHelpOptions = true,
        description = "Record an importance matrix (mean squared input of every matrix column) over calibration text.",
        footer = {"", "Example:",
                "  ./qlab calibrate --model models/q05b \\",
                "      --text datasets/calib/en-prose.txt datasets/calib/code.txt \\",
                "      --max-tokens 1024 --out models/q05b/calib.imatrix"})
final class CalibrateCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--model", required = true, description = "The f32 model directory, or a GGUF file.")
    Path model;

    @Option(names = "--text", arity = "1..*", paramLabel = "FILE", description = "Calibration text files.")
    List<Path> texts = new ArrayList<>();

    @Option(names = "--ids", arity = "1..*", paramLabel = "FILE", description = "Calibration token-id files.")
    List<Path> ids = new ArrayList<>();

    @Option(names = "--ctx", defaultValue = "512", description = "Window length (default: ${DEFAULT-VALUE}).")
    int ctx;

    @Option(names = "--max-tokens", paramLabel = "N", description = "Use at most N tokens of each file.")
    Integer maxTokens;

    @Option(names = "--out", required = true, description = "Output file.")
    Path out;

    @Option(names = "--format", paramLabel = "qlab|gguf|dat",
            description = "qlab (a safetensors container), gguf or dat (llama-imatrix's two formats). "
                    + "Default: by the --out name (.gguf, .dat, else qlab).")
    String format;

    @Mixin
    EngineOptions threads;

    @Override
    public Integer call() {
        if (texts.isEmpty() && ids.isEmpty()) {
            throw new QlabException("calibrate needs --text FILE... or --ids FILE...");
        }
        LlamaImatrix.Format fmt = format == null ? LlamaImatrix.Format.ofFileName(out) : switch (format) {
            case "qlab" -> LlamaImatrix.Format.QLAB;
            case "gguf" -> LlamaImatrix.Format.GGUF;
            case "dat" -> LlamaImatrix.Format.DAT;
            default -> throw new QlabException("--format is \"" + format + "\", expected qlab, gguf or dat");
        };
        if (ctx < 2) {
            throw new QlabException("--ctx must be at least 2, got " + ctx);
        }
        List<int[]> tokenized = new ArrayList<>();
        List<String> hashes = new ArrayList<>();
        for (Path t : texts) {
            String s = read(t);
            if (s.isBlank()) {
                throw new QlabException(t + ": the calibration text is empty");
            }
            tokenized.add(limit(TextTokens.encode(model, s)));
        }
        for (Path f : ids) {
            tokenized.add(limit(IdList.parse(f.toString(), read(f))));
        }
        for (int[] t : tokenized) {
            hashes.add(ModelHash.ofTokens(t));
        }
        Model m = Models.open(model);
        long t0 = System.nanoTime();
        ImportanceMatrix im;
        try (WorkerPool pool = threads.pool()) {
            im = ImportanceMatrix.calibrate(new Transformer(m, pool, threads.kvTypes()), tokenized, hashes, ctx, ModelHash.of(model));
        }
        LlamaImatrix.save(im, fmt, out);
        spec.commandLine().getErr().printf("wrote %s: %d matrices, %d tokens in %.1f s%n", out, im.values().size(), im.tokens(),
                (System.nanoTime() - t0) / 1e9);
        return 0;
    }

    private int[] limit(int[] t) {
        return maxTokens == null ? t : Arrays.copyOf(t, Math.min(t.length, maxTokens));
    }

    private static String read(Path p) {
        try {
            return Files.readString(p);
        } catch (NoSuchFileException e) {
            throw new QlabException(p + ": not found");
        } catch (IOException e) {
            throw new QlabException(p + ": cannot read: " + e.getMessage());
        }
    }
}
