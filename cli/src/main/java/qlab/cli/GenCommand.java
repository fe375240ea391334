package qlab.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import qlab.engine.QlabException;
import qlab.engine.data.Datasets;
import qlab.engine.synthetic.SyntheticCheckpoint;
import qlab.engine.synthetic.SyntheticPreset;
import qlab.engine.tokenizer.train.SyntheticTokenizer;
import qlab.engine.tokenizer.train.TrainedBpe;

@Command(name = "gen", mixinStandardHelpOptions = true,
        description = {"Write a deterministic synthetic Qwen2 checkpoint (Hugging Face layout, BF16) for runs without a download.",
            "With the checkout's datasets/ present, a byte-level BPE tokenizer trained on its calibration text is written too."})
final class GenCommand implements Callable<Integer> {

    /** Tokenizer size for synthetic models: enough merges for the calibration corpus, whatever the model's vocabulary. */
    static final int TOKENIZER_VOCAB = 8192;

    @Spec
    CommandSpec spec;

    @Option(names = "--preset", required = true, description = "qwen2.5-0.5b, small or tiny.")
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
        long t0 = System.nanoTime();
        int used = p.config().vocabSize();
        String tokenizerNote = "no tokenizer";
        if (!noTokenizer) {
            var datasets = Datasets.ofCheckout();
            if (datasets.isPresent()) {
                List<String> texts = new ArrayList<>();
                for (Datasets.Entry e : datasets.get().purpose("calibration")) {
                    texts.add(e.read());
                }
                TrainedBpe bpe = SyntheticTokenizer.write(out, Math.min(TOKENIZER_VOCAB, p.config().vocabSize()),
                        p.config().maxPositionEmbeddings(), texts);
                used = bpe.size();
                writeGenerationConfig(bpe);
                tokenizerNote = "tokenizer of " + bpe.size() + " tokens trained on datasets/calib";
            } else {
                spec.commandLine().getErr().println("note: datasets/ not found (run through ./qlab); writing no tokenizer");
            }
        }
        new SyntheticCheckpoint(p.config(), seed, used).write(out);
        spec.commandLine().getErr().printf("wrote %s (%s, seed %d, %,d parameters, %s) in %.1f s%n", out, p.id(), seed,
                p.config().parameterCount(), tokenizerNote, (System.nanoTime() - t0) / 1e9);
        return 0;
    }

    private void writeGenerationConfig(TrainedBpe bpe) {
        int eos = bpe.specialTokenId(SyntheticTokenizer.EOS_TOKEN);
        int pad = bpe.specialTokenId(SyntheticTokenizer.PAD_TOKEN);
        String json = "{\n  \"bos_token_id\": " + pad + ",\n  \"eos_token_id\": [" + eos + ", " + pad + "],\n  \"pad_token_id\": " + pad
                + ",\n  \"do_sample\": true,\n  \"temperature\": 0.7,\n  \"top_p\": 0.8,\n  \"top_k\": 20,\n  \"repetition_penalty\": 1.05\n}\n";
        try {
            Files.createDirectories(out);
            Files.writeString(out.resolve("generation_config.json"), json);
        } catch (IOException e) {
            throw new QlabException(out + ": cannot write generation_config.json: " + e.getMessage());
        }
    }
}
