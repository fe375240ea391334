package qlab.engine.synthetic;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import qlab.engine.QlabException;
import qlab.engine.data.Datasets;
import qlab.engine.tokenizer.train.SyntheticTokenizer;
import qlab.engine.tokenizer.train.TrainedBpe;
import qlab.engine.util.IoErrors;
import qlab.engine.util.OutputPaths;

/**
 * A complete synthetic model directory: config.json and model.safetensors, and, when the
 * project's datasets are at hand, a byte-level BPE tokenizer trained on the calibration text
 * (tokenizer.json, tokenizer_config.json) and a generation_config.json, so text commands work on
 * it exactly as on a downloaded model.
 */
public final class SyntheticModelDirectory {

    /** Tokenizer size for synthetic models: enough merges for the calibration corpus, whatever the model's vocabulary. */
    public static final int TOKENIZER_VOCAB = 8192;

    /** What was written: the tokenizer's size, or empty without one. */
    public record Written(Path dir, Optional<Integer> tokenizerSize) {}

    private SyntheticModelDirectory() {}

    public static Written write(SyntheticPreset preset, long seed, Path out, Optional<Datasets> datasets) {
        OutputPaths.prepareDirectory(out);
        int used = preset.config().vocabSize();
        Optional<Integer> tokenizer = Optional.empty();
        if (datasets.isPresent()) {
            List<String> texts = new ArrayList<>();
            for (Datasets.Entry e : datasets.get().purpose("calibration")) {
                texts.add(e.read());
            }
            TrainedBpe bpe = SyntheticTokenizer.write(out, Math.min(TOKENIZER_VOCAB, preset.config().vocabSize()),
                    preset.config().maxPositionEmbeddings(), texts);
            used = bpe.size();
            writeGenerationConfig(out, bpe.specialTokenId(SyntheticTokenizer.EOS_TOKEN),
                    bpe.specialTokenId(SyntheticTokenizer.PAD_TOKEN));
            tokenizer = Optional.of(bpe.size());
        }
        new SyntheticCheckpoint(preset.config(), seed, used).write(out);
        return new Written(out, tokenizer);
    }

    /** generation_config.json: end of sequence {@code eos} or {@code pad}, Qwen2.5-Instruct's sampling defaults. */
    public static void writeGenerationConfig(Path out, int eos, int pad) {
        String json = "{\n  \"bos_token_id\": " + pad + ",\n  \"eos_token_id\": [" + eos + ", " + pad + "],\n  \"pad_token_id\": " + pad
                + ",\n  \"do_sample\": true,\n  \"temperature\": 0.7,\n  \"top_p\": 0.8,\n  \"top_k\": 20,\n  \"repetition_penalty\": 1.05\n}\n";
        try {
            Files.createDirectories(out);
            Files.writeString(out.resolve("generation_config.json"), json);
        } catch (IOException e) {
            throw new QlabException(out + ": cannot write generation_config.json: " + IoErrors.why(e));
        }
    }
}
