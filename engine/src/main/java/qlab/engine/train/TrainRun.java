package qlab.engine.train;

import qlab.engine.bench.ComputePeak;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalDouble;
import java.util.function.Consumer;
import qlab.engine.QlabException;
import qlab.engine.data.Datasets;
import qlab.engine.model.ModelConfig;
import qlab.engine.safetensors.Checkpoint;
import qlab.engine.safetensors.DType;
import qlab.engine.synthetic.SyntheticModelDirectory;
import qlab.engine.tokenizer.Tokenizer;
import qlab.engine.tokenizer.train.SyntheticTokenizer;
import qlab.engine.tokenizer.train.TokenizerJsonWriter;
import qlab.engine.util.WorkerPool;

/**
 * One {@code qlab train} run from files to a model directory: the tokenizer (given, or trained on
 * the training text with the project's BPE trainer), the packed token streams, the training loop
 * (fresh or resumed), and the Hugging Face directory with {@code train.json} beside it.
 *
 * <p>Each data file's last {@link #VALIDATION_FRACTION} (cut at a line start) is held out as the
 * validation split; the tokenizer never sees it. Files are packed one after another, each followed
 * by {@code <|endoftext|>}.
 */
public final class TrainRun {

    public static final double VALIDATION_FRACTION = 0.02;
    public static final String SEPARATOR = SyntheticTokenizer.PAD_TOKEN; // <|endoftext|>
    public static final String CHECKPOINT = "checkpoint.safetensors";
    public static final String REPORT = "train.json";

    /** Where the model's shape comes from: a preset (vocabulary from the tokenizer) or a config.json. */
    public record Shape(TrainPreset preset, Path configFile) {}

    /**
     * Everything a run needs. tokenizerDir or vocab (one of them); peakMacs empty to measure it;
     * bestWeights writes the weights of the lowest validation loss instead of the last step's.
     */
    public record Request(Shape shape, List<Path> data, Path tokenizerDir, Integer vocab, TrainOptions options,
                          int threads, Path out, boolean resume, DType dtype, OptionalDouble peakMacs,
                          boolean bestWeights) {}

    /** A data file as read: its text split, its hash. */
    public record DataFile(Path path, long bytes, String sha256, String trainText, String validationText) {}

    /** What a finished run wrote. */
    public record Result(Trainer trainer, Path out, Path report, double peakMacs, long wallNanos) {}

    private TrainRun() {}

    public static Result run(Request r, Trainer.Progress progress, Consumer<String> log) {
        long t0 = System.nanoTime();
        TrainOptions o = r.options();
        Path ckpt = r.out().resolve(CHECKPOINT);
        if (r.resume() && !Files.isRegularFile(ckpt)) {
            throw new QlabException(ckpt + ": no checkpoint to resume from");
        }
        List<DataFile> files = read(r.data());
        try {
            Files.createDirectories(r.out());
        } catch (IOException e) {
            throw new QlabException(r.out() + ": cannot create the output directory: " + e.getMessage());
        }
        Tokenizer tok = tokenizer(r, files, log);
        int sep = separator(tok, r.out().resolve(TokenizerJsonWriter.TOKENIZER_JSON));
        ModelConfig config = modelConfig(r.shape(), tok.vocabSize());
        if (o.seqLen() > config.maxPositionEmbeddings()) {
            throw new QlabException("train: --seq-len " + o.seqLen() + " is longer than the model's max_position_embeddings "
                    + config.maxPositionEmbeddings());
        }
        int[] train = pack(tok, files.stream().map(DataFile::trainText).toList(), sep);
        int[] validation = pack(tok, files.stream().map(DataFile::validationText).toList(), sep);
        log.accept(String.format("data: %d file(s), %,d training tokens, %,d validation tokens; model %,d parameters",
                files.size(), train.length, validation.length, config.parameterCount()));

        try (WorkerPool pool = new WorkerPool(r.threads())) {
            double peak = r.peakMacs().isPresent() ? r.peakMacs().getAsDouble() : ComputePeak.measure(pool, 10).maxGmacs() * 1e9;
            Trainer trainer = r.resume()
                    ? Trainer.resume(ckpt, config, o, train, validation, pool)
                    : Trainer.start(config, o, train, validation, pool);
            if (r.resume()) {
                log.accept("resumed " + ckpt + " at step " + trainer.step());
            }
            trainer.run(o.steps(), ckpt, progress);
            writeModel(r.out(), trainer, r.bestWeights() ? trainer.bestParameters() : trainer.parameters(), r.dtype(), tok);
            Path report = r.out().resolve(REPORT);
            long wall = System.nanoTime() - t0;
            writeReport(report, r, files, tok, trainer, peak, wall);
            Files.deleteIfExists(ckpt);
            return new Result(trainer, r.out(), report, peak, wall);
        } catch (IOException e) {
            throw new QlabException(r.out() + ": " + e.getMessage());
        }
    }

    static List<DataFile> read(List<Path> paths) {
        if (paths.isEmpty()) {
            throw new QlabException("train: --data names no file");
        }
        List<DataFile> out = new ArrayList<>();
        for (Path p : paths) {
            byte[] bytes;
            try {
                bytes = Files.readAllBytes(p);
            } catch (IOException e) {
                throw new QlabException(p + ": cannot read training data: " + e.getMessage());
            }
            String text = new String(bytes, StandardCharsets.UTF_8);
            int cut = splitPoint(text);
            out.add(new DataFile(p, bytes.length, Datasets.sha256(bytes), text.substring(0, cut), text.substring(cut)));
        }
        return out;
    }

    /** The start of the line where the last VALIDATION_FRACTION of the text begins (or the exact point in a text without one). */
    static int splitPoint(String text) {
        int at = (int) (text.length() * (1 - VALIDATION_FRACTION));
        int line = text.indexOf('\n', at);
        return line < 0 ? at : line + 1;
    }

    private static Tokenizer tokenizer(Request r, List<DataFile> files, Consumer<String> log) {
        Path out = r.out();
        if (r.tokenizerDir() != null) {
            Tokenizer tok = Tokenizer.load(r.tokenizerDir());
            Path src = Files.isDirectory(r.tokenizerDir()) ? r.tokenizerDir() : r.tokenizerDir().getParent();
            for (String name : List.of(TokenizerJsonWriter.TOKENIZER_JSON, TokenizerJsonWriter.TOKENIZER_CONFIG_JSON)) {
                Path from = src.resolve(name);
                try {
                    if (Files.isRegularFile(from) && !Files.isSameFile(src, out)) {
                        Files.copy(from, out.resolve(name), StandardCopyOption.REPLACE_EXISTING);
                    }
                } catch (IOException e) {
                    throw new QlabException(from + ": cannot copy into " + out + ": " + e.getMessage());
                }
            }
            return tok;
        }
        if (r.vocab() == null) {
            throw new QlabException("train: give --tokenizer DIR or --vocab N");
        }
        if (r.resume() && Files.isRegularFile(out.resolve(TokenizerJsonWriter.TOKENIZER_JSON))) {
            // The tokenizer the interrupted run trained: retraining would give the same one, slower.
            return Tokenizer.load(out);
        }
        long t0 = System.nanoTime();
        SyntheticTokenizer.write(out, r.vocab(), TrainPreset.MAX_POSITIONS,
                files.stream().map(DataFile::trainText).toList());
        Tokenizer tok = Tokenizer.load(out);
        log.accept(String.format("tokenizer: %d tokens trained on the training text in %.1f s", tok.vocabSize(),
                (System.nanoTime() - t0) / 1e9));
        return tok;
    }

    static ModelConfig modelConfig(Shape shape, int tokenizerVocab) {
        if (shape.preset() != null) {
            return shape.preset().config(tokenizerVocab);
        }
        ModelConfig c = ModelConfig.read(shape.configFile());
        if (c.vocabSize() < tokenizerVocab) {
            throw new QlabException(shape.configFile() + ": field \"vocab_size\" is " + c.vocabSize()
                    + ", smaller than the tokenizer's " + tokenizerVocab + " tokens");
        }
        return c;
    }

    /**
     * The token stream a run trains on (the validation tails left out), as {@link #run} packs it:
     * each file's training text tokenized by {@code tok}, followed by {@code <|endoftext|>}.
     * {@code tokenizerFile} names the tokenizer in the error when it has no separator.
     */
    public static int[] trainingTokens(Tokenizer tok, List<Path> data, Path tokenizerFile) {
        int sep = separator(tok, tokenizerFile);
        return pack(tok, read(data).stream().map(DataFile::trainText).toList(), sep);
    }

    private static int separator(Tokenizer tok, Path tokenizerFile) {
        return tok.tokenId(SEPARATOR).orElseThrow(() -> new QlabException(tokenizerFile + ": field \"added_tokens\" has no "
                + SEPARATOR + " (training packs documents with it)"));
    }

    /** The texts' tokens, each text followed by the separator. */
    static int[] pack(Tokenizer tok, List<String> texts, int separator) {
        List<int[]> parts = new ArrayList<>();
        int total = 0;
        for (String t : texts) {
            int[] ids = tok.encode(t);
            parts.add(ids);
            total += ids.length + 1;
        }
        int[] out = new int[total];
        int at = 0;
        for (int[] ids : parts) {
            System.arraycopy(ids, 0, out, at, ids.length);
            at += ids.length;
            out[at++] = separator;
        }
        return out;
    }

    /** config.json, model.safetensors and generation_config.json (the tokenizer files are already there). */
    static void writeModel(Path out, Trainer trainer, Parameters weights, DType dtype, Tokenizer tok) throws IOException {
        ModelConfig c = trainer.config();
        String torchDtype = switch (dtype) {
            case F32 -> "float32";
            case BF16 -> "bfloat16";
            case F16 -> "float16";
            default -> throw new QlabException("train: --dtype " + dtype + " is not a float type");
        };
        ModelConfig written = new ModelConfig(c.hiddenSize(), c.intermediateSize(), c.numLayers(), c.numHeads(),
                c.numKvHeads(), c.headDim(), c.vocabSize(), c.rmsNormEps(), c.ropeTheta(), c.tieWordEmbeddings(),
                c.maxPositionEmbeddings(), torchDtype);
        Files.writeString(out.resolve("config.json"), written.toJson());
        weights.writeSafetensors(out.resolve(Checkpoint.SINGLE), dtype);
        int pad = tok.tokenId(SEPARATOR).orElseThrow();
        int eos = tok.tokenId(SyntheticTokenizer.EOS_TOKEN).orElse(pad);
        SyntheticModelDirectory.writeGenerationConfig(out, eos, pad);
    }

    static void writeReport(Path file, Request r, List<DataFile> files, Tokenizer tok, Trainer t, double peak,
                            long wallNanos) throws IOException {
        ObjectMapper mapper = new ObjectMapper();
        ObjectNode root = mapper.createObjectNode();
        root.set("model", mapper.readTree(t.config().toJson()));
        root.put("parameters", t.config().parameterCount());
        root.set("options", mapper.valueToTree(r.options().describe()));
        root.put("threads", r.threads());
        root.put("dtype", r.dtype().name());
        ObjectNode tk = root.putObject("tokenizer");
        tk.put("vocab_size", tok.vocabSize());
        tk.put("source", r.tokenizerDir() != null ? r.tokenizerDir().toString() : "trained on the training text");
        ArrayNode data = root.putArray("data");
        for (DataFile f : files) {
            ObjectNode d = data.addObject();
            d.put("path", f.path().toString());
            d.put("bytes", f.bytes());
            d.put("sha256", f.sha256());
        }
        root.put("validation_fraction", VALIDATION_FRACTION);
        ObjectNode written = root.putObject("weights_written");
        Trainer.Eval best = t.bestEval();
        if (r.bestWeights() && best != null) {
            written.put("choice", "best");
            written.put("step", best.step());
            written.put("validation_loss", best.valLoss());
        } else {
            written.put("choice", "last");
            written.put("step", t.step());
        }
        root.put("steps", t.step());
        root.put("tokens_per_step", t.tokensPerStep());
        root.put("wall_seconds", wallNanos / 1e9);
        root.put("train_seconds", t.trainNanos() / 1e9);
        root.put("tokens_per_second", t.tokensPerSecond());
        ObjectNode products = root.putObject("products");
        double productSeconds = t.productNanos() / 1e9;
        double macsPerSecond = productSeconds > 0 ? t.productMacs() / productSeconds : 0;
        products.put("multiply_adds", t.productMacs());
        products.put("seconds", productSeconds);
        products.put("multiply_adds_per_second", macsPerSecond);
        products.put("peak_multiply_adds_per_second", peak);
        products.put("peak_source", r.peakMacs().isPresent() ? "given" : "measured (twelve FMA chains per thread)");
        products.put("fraction_of_peak", peak > 0 ? macsPerSecond / peak : 0);
        products.put("share_of_train_time", t.trainNanos() > 0 ? (double) t.productNanos() / t.trainNanos() : 0);
        ArrayNode steps = root.putArray("train_loss");
        for (Trainer.Point p : t.history()) {
            steps.addObject().put("step", p.step()).put("loss", p.trainLoss()).put("lr", p.lr()).put("grad_norm", p.gradNorm());
        }
        ArrayNode evals = root.putArray("validation_loss");
        for (Trainer.Eval e : t.evals()) {
            evals.addObject().put("step", e.step()).put("loss", e.valLoss());
        }
        Files.writeString(file, mapper.writerWithDefaultPrettyPrinter().writeValueAsString(root) + "\n");
    }
}
