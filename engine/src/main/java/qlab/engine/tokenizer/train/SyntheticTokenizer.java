package qlab.engine.tokenizer.train;

import java.nio.file.Path;
import java.util.List;

/**
 * The tokenizer for synthetic checkpoints: a byte-level BPE trained on text we own, with Qwen2's
 * special tokens after it, so text commands work on models generated without downloading anything.
 * End of sequence is {@code <|im_end|>} and padding {@code <|endoftext|>}, as in Qwen2.5-Instruct.
 */
public final class SyntheticTokenizer {

    public static final String EOS_TOKEN = "<|im_end|>";
    public static final String PAD_TOKEN = "<|endoftext|>";

    private SyntheticTokenizer() {}

    /** Trains on {@code texts} so that BPE tokens plus special tokens number at most {@code vocabSize}. */
    public static TrainedBpe trainBpe(int vocabSize, List<String> texts) {
        return new BpeTrainer(vocabSize, BpeTrainer.QWEN_SPECIAL_TOKENS).train(texts);
    }

    /** The {@code tokenizer.json} text of a tokenizer trained on {@code texts} for a model with {@code vocabSize}. */
    public static String train(int vocabSize, List<String> texts) {
        return TokenizerJsonWriter.tokenizerJson(trainBpe(vocabSize, texts));
    }

    /** Trains and writes {@code tokenizer.json} and {@code tokenizer_config.json} into {@code modelDir}. */
    public static TrainedBpe write(Path modelDir, int vocabSize, int modelMaxLength, List<String> texts) {
        TrainedBpe bpe = trainBpe(vocabSize, texts);
        TokenizerJsonWriter.write(modelDir, bpe, EOS_TOKEN, PAD_TOKEN, modelMaxLength);
        return bpe;
    }
}
