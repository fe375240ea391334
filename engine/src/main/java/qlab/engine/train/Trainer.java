package qlab.engine.train;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import qlab.engine.QlabException;
import qlab.engine.data.Datasets;
import qlab.engine.model.ModelConfig;
import qlab.engine.safetensors.DType;
import qlab.engine.safetensors.SafetensorsFile;
import qlab.engine.safetensors.SafetensorsWriter;
import qlab.engine.util.WorkerPool;

/**
 * The training loop: batches of whole sequences cut from the packed token stream, forward and
 * backward in micro-batches, AdamW, a validation loss now and then, checkpoints.
 *
 * <p>The train stream is cut into windows of seqLen + 1 tokens starting every seqLen tokens; each
 * epoch visits them all in an order drawn from the seed and the epoch number alone, so the data
 * position (epoch, cursor) is the whole state of the batch order. A checkpoint holds the weights,
 * both AdamW moments, that position, the step and the loss history; a run resumed from it makes
 * exactly the updates the uninterrupted run makes, bit for bit.
 */
public final class Trainer {

    /** One optimizer step: mean train loss of its batch (nats/token), the learning rate, the gradient norm before clipping. */
    public record Point(int step, double trainLoss, double lr, double gradNorm) {}

    /** A validation loss (nats/token) after {@code step} steps. */
    public record Eval(int step, double valLoss) {}

    /** Called after every step; {@code eval} is the validation loss measured after it, or null. */
    @FunctionalInterface
    public interface Progress {
        void step(Trainer trainer, Point point, Eval eval);
    }

    static final String STATE_KEY = "qlab.train_state";

    private final ModelConfig config;
    private final TrainOptions o;
    private final int[] train;
    private final int[] validation;
    private final String dataFingerprint;
    private final WorkerPool pool;
    private final Parameters params;
    private final Parameters grads;
    private final AdamW adam;
    private final TrainingModel model;
    private final int windows;

    private int step;
    private int epoch;
    private int cursor;
    private int[] order;
    private final List<Point> history = new ArrayList<>();
    private final List<Eval> evals = new ArrayList<>();
    /** The weights at the lowest validation loss measured so far (null before the first), and that loss. */
    private Parameters best;
    private Eval bestEval;
    private long trainNanos;
    private long productMacs;
    private long productNanos;
    private int stepsThisRun;
    private long nanosThisRun;

    private Trainer(ModelConfig config, TrainOptions options, int[] train, int[] validation, WorkerPool pool) {
        this.config = config;
        this.o = options;
        this.train = train;
        this.validation = validation;
        this.dataFingerprint = fingerprint(train, validation);
        this.pool = pool;
        this.windows = (train.length - 1) / options.seqLen();
        if (windows < 1) {
            throw new QlabException("train: --data gives " + train.length + " training tokens, too few for --seq-len "
                    + options.seqLen());
        }
        for (int[] stream : new int[][] {train, validation}) {
            for (int t : stream) {
                if (t < 0 || t >= config.vocabSize()) {
                    throw new QlabException("train: token id " + t + " is outside the model's vocabulary (vocab_size "
                            + config.vocabSize() + ")");
                }
            }
        }
        this.params = Parameters.init(config, options.seed());
        this.grads = Parameters.zeros(config);
        this.adam = new AdamW(params, pool);
        this.model = new TrainingModel(config, pool);
        this.order = permutation(0);
    }

    /** A fresh run from initial weights. */
    public static Trainer start(ModelConfig config, TrainOptions options, int[] train, int[] validation, WorkerPool pool) {
        return new Trainer(config, options, train, validation, pool);
    }

    /**
     * The run a checkpoint was saved from, at the step it was saved; the config, options and data
     * must be the ones it was started with.
     */
    public static Trainer resume(Path checkpoint, ModelConfig config, TrainOptions options, int[] train,
                                 int[] validation, WorkerPool pool) {
        Trainer t = new Trainer(config, options, train, validation, pool);
        t.load(checkpoint);
        return t;
    }

    public Parameters parameters() {
        return params;
    }

    /**
     * The weights after the step with the lowest validation loss measured (early stopping's choice;
     * the first such step on ties), or the current weights when no validation loss was measured.
     */
    public Parameters bestParameters() {
        return best == null ? params : best;
    }

    /** The validation loss measured with {@link #bestParameters()}, or null when none was measured. */
    public Eval bestEval() {
        return bestEval;
    }

    public ModelConfig config() {
        return config;
    }

    public TrainOptions options() {
        return o;
    }

    /** Steps done. */
    public int step() {
        return step;
    }

    public List<Point> history() {
        return List.copyOf(history);
    }

    public List<Eval> evals() {
        return List.copyOf(evals);
    }

    /** Tokens predicted per step. */
    public int tokensPerStep() {
        return o.sequencesPerStep() * o.seqLen();
    }

    /** Time spent in steps (forward, backward, update), over every run of this training, resumed ones included. */
    public long trainNanos() {
        return trainNanos;
    }

    public long productMacs() {
        return productMacs;
    }

    public long productNanos() {
        return productNanos;
    }

    /** Training tokens per second of step time, over every run of this training. */
    public double tokensPerSecond() {
        return trainNanos == 0 ? 0 : (double) step * tokensPerStep() / (trainNanos / 1e9);
    }

    /** Seconds left at the pace of the steps this process has run. */
    public double etaSeconds() {
        return stepsThisRun == 0 ? Double.NaN : (o.steps() - step) * (nanosThisRun / 1e9 / stepsThisRun);
    }

    // ----------------------------------------------------------------------------------------
    // The loop

    /**
     * Trains until {@code untilStep} steps are done (at most the options' steps), writing a
     * checkpoint to {@code checkpoint} (if not null) every checkpointEvery steps.
     */
    public void run(int untilStep, Path checkpoint, Progress progress) {
        int end = Math.min(untilStep, o.steps());
        while (step < end) {
            long t0 = System.nanoTime();
            Point p = trainStep();
            long dt = System.nanoTime() - t0;
            trainNanos += dt;
            nanosThisRun += dt;
            stepsThisRun++;
            Eval eval = null;
            if (step % o.evalEvery() == 0 || step == o.steps()) {
                double vl = validationLoss();
                if (!Double.isNaN(vl)) {
                    eval = new Eval(step, vl);
                    evals.add(eval);
                    if (bestEval == null || vl < bestEval.valLoss()) {
                        bestEval = eval;
                        if (best == null) {
                            best = params.copy();
                        } else {
                            best.copyFrom(params);
                        }
                    }
                }
            }
            if (progress != null) {
                progress.step(this, p, eval);
            }
            if (checkpoint != null && step % o.checkpointEvery() == 0 && step < o.steps()) {
                save(checkpoint);
            }
        }
    }

    private Point trainStep() {
        grads.list().forEach(t -> java.util.Arrays.fill(t.data(), 0f));
        int seqs = o.sequencesPerStep();
        int perPass = o.sequencesPerPass();
        int len = o.seqLen();
        float scale = 1f / (seqs * len);
        double lossSum = 0;
        long macs0 = model.productMacs();
        long nanos0 = model.productNanos();
        for (int done = 0; done < seqs; done += perPass) {
            int count = Math.min(perPass, seqs - done);
            int[] tokens = new int[count * (len + 1)];
            for (int s = 0; s < count; s++) {
                int w = nextWindow();
                System.arraycopy(train, w * len, tokens, s * (len + 1), len + 1);
            }
            lossSum += model.forwardBackward(params, grads, tokens, count, len, scale);
        }
        double lr = o.learningRate(step);
        double norm = adam.step(params, grads, lr, o.weightDecay(), o.clip(), step + 1);
        productMacs += model.productMacs() - macs0;
        productNanos += model.productNanos() - nanos0;
        step++;
        Point p = new Point(step, lossSum / (seqs * len), lr, norm);
        history.add(p);
        return p;
    }

    /** Mean loss over the first evalTokens of the validation split (whole sequences); NaN when it holds none. */
    public double validationLoss() {
        int len = o.seqLen();
        int seqs = Math.min((validation.length - 1) / len, o.evalTokens() / len);
        if (seqs <= 0) {
            return Double.NaN;
        }
        double sum = 0;
        int perPass = o.sequencesPerPass();
        for (int done = 0; done < seqs; done += perPass) {
            int count = Math.min(perPass, seqs - done);
            int[] tokens = new int[count * (len + 1)];
            for (int s = 0; s < count; s++) {
                System.arraycopy(validation, (done + s) * len, tokens, s * (len + 1), len + 1);
            }
            sum += model.loss(params, tokens, count, len);
        }
        return sum / ((double) seqs * len);
    }

    private int nextWindow() {
        if (cursor == windows) {
            epoch++;
            cursor = 0;
            order = permutation(epoch);
        }
        return order[cursor++];
    }

    /** Epoch e's order of the windows: Fisher–Yates driven by a generator seeded from (seed, e) alone. */
    private int[] permutation(int e) {
        int[] p = new int[windows];
        for (int i = 0; i < windows; i++) {
            p[i] = i;
        }
        SplitMix64 rng = new SplitMix64(o.seed() * 0x632BE59BD9B4E019L + e + 1);
        for (int i = windows - 1; i > 0; i--) {
            int j = rng.nextInt(i + 1);
            int tmp = p[i];
            p[i] = p[j];
            p[j] = tmp;
        }
        return p;
    }

    // ----------------------------------------------------------------------------------------
    // Checkpoints

    /** Writes weights, moments and state into one safetensors file (atomically: a temporary file renamed). */
    public void save(Path file) {
        SafetensorsWriter w = new SafetensorsWriter();
        w.metadata(STATE_KEY, stateJson());
        params.addTo(w, "param.", DType.F32);
        adam.firstMoment().addTo(w, "adam_m.", DType.F32);
        adam.secondMoment().addTo(w, "adam_v.", DType.F32);
        if (best != null) {
            best.addTo(w, "best.", DType.F32);
        }
        w.write(file);
    }

    private String stateJson() {
        ObjectMapper mapper = new ObjectMapper();
        ObjectNode n = mapper.createObjectNode();
        n.put("step", step);
        n.put("epoch", epoch);
        n.put("cursor", cursor);
        n.put("train_nanos", trainNanos);
        n.put("product_macs", productMacs);
        n.put("product_nanos", productNanos);
        n.put("data_sha256", dataFingerprint);
        n.put("config", config.toJson());
        n.set("options", mapper.valueToTree(o.describe()));
        ArrayNode h = n.putArray("history");
        for (Point p : history) {
            // Doubles as their bits: the resumed history is the same numbers exactly.
            h.addArray().add(p.step()).add(Double.doubleToRawLongBits(p.trainLoss()))
                    .add(Double.doubleToRawLongBits(p.lr())).add(Double.doubleToRawLongBits(p.gradNorm()));
        }
        ArrayNode ev = n.putArray("evals");
        for (Eval e : evals) {
            ev.addArray().add(e.step()).add(Double.doubleToRawLongBits(e.valLoss()));
        }
        if (bestEval != null) {
            n.put("best_eval_step", bestEval.step());
        }
        return n.toString();
    }

    private void load(Path file) {
        if (!Files.isRegularFile(file)) {
            throw new QlabException(file + ": no checkpoint to resume from");
        }
        SafetensorsFile f = SafetensorsFile.open(file);
        String json = f.metadata().get(STATE_KEY);
        if (json == null) {
            throw new QlabException(file + ": field \"__metadata__." + STATE_KEY + "\" is missing (not a qlab training checkpoint)");
        }
        JsonNode n;
        try {
            n = new ObjectMapper().readTree(json);
        } catch (IOException e) {
            throw new QlabException(file + ": field \"__metadata__." + STATE_KEY + "\" is not valid JSON");
        }
        ObjectMapper mapper = new ObjectMapper();
        if (!n.path("config").asText().equals(config.toJson())) {
            throw new QlabException(file + ": field \"config\": the checkpoint was trained with another model config");
        }
        JsonNode saved = n.path("options");
        JsonNode now = mapper.valueToTree(o.describe());
        var names = now.fieldNames();
        while (names.hasNext()) {
            String name = names.next();
            if (!String.valueOf(now.get(name)).equals(String.valueOf(saved.get(name)))) {
                throw new QlabException(file + ": field \"options." + name + "\" is " + saved.get(name)
                        + " in the checkpoint, " + now.get(name) + " now; resume with the options the run started with");
            }
        }
        if (!n.path("data_sha256").asText().equals(dataFingerprint)) {
            throw new QlabException(file + ": field \"data_sha256\": the checkpoint was trained on other data or another tokenizer");
        }
        params.readFrom(f, "param.");
        adam.firstMoment().readFrom(f, "adam_m.");
        adam.secondMoment().readFrom(f, "adam_v.");
        step = n.path("step").asInt();
        epoch = n.path("epoch").asInt();
        cursor = n.path("cursor").asInt();
        trainNanos = n.path("train_nanos").asLong();
        productMacs = n.path("product_macs").asLong();
        productNanos = n.path("product_nanos").asLong();
        order = permutation(epoch);
        history.clear();
        for (JsonNode p : n.path("history")) {
            history.add(new Point(p.get(0).asInt(), Double.longBitsToDouble(p.get(1).asLong()),
                    Double.longBitsToDouble(p.get(2).asLong()), Double.longBitsToDouble(p.get(3).asLong())));
        }
        evals.clear();
        for (JsonNode e : n.path("evals")) {
            evals.add(new Eval(e.get(0).asInt(), Double.longBitsToDouble(e.get(1).asLong())));
        }
        bestEval = null;
        best = null;
        if (n.has("best_eval_step")) {
            int at = n.path("best_eval_step").asInt();
            bestEval = evals.stream().filter(e -> e.step() == at).findFirst().orElseThrow(() -> new QlabException(
                    file + ": field \"best_eval_step\" names step " + at + ", which has no validation loss"));
            best = Parameters.zeros(config);
            best.readFrom(f, "best.");
        }
    }

    /** SHA-256 of both token streams, so a checkpoint is only resumed on the data it was trained on. */
    static String fingerprint(int[] train, int[] validation) {
        ByteBuffer b = ByteBuffer.allocate(4 * (train.length + validation.length + 2));
        b.putInt(train.length);
        for (int t : train) {
            b.putInt(t);
        }
        b.putInt(validation.length);
        for (int t : validation) {
            b.putInt(t);
        }
        return Datasets.sha256(b.array());
    }
}
