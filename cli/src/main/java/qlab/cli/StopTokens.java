package qlab.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.Optional;
import java.util.Set;
import qlab.engine.gguf.GgufFile;
import qlab.engine.sampling.GenerationDefaults;
import qlab.engine.tokenizer.Tokenizer;
import qlab.quant.checkpoint.GgufCheckpoint;

/**
 * Tokens that end a generation: the model's eos_token_id list from generation_config.json when it
 * has one (a GGUF's tokenizer.ggml.eos_token_id and eot_token_id), otherwise the tokenizer's end-of-text and end-of-turn tokens.
 */
final class StopTokens {

    private StopTokens() {}

    static Set<Integer> forModel(Path model, Optional<Tokenizer> tokenizer) {
        Set<Integer> stops = new LinkedHashSet<>();
        if (GgufCheckpoint.isGguf(model)) {
            GgufFile f = GgufCheckpoint.open(model);
            if (f.has("tokenizer.ggml.eos_token_id")) {
                stops.add((int) f.integer("tokenizer.ggml.eos_token_id"));
            }
            if (f.has("tokenizer.ggml.eot_token_id")) {
                stops.add((int) f.integer("tokenizer.ggml.eot_token_id"));
            }
        }
        Path dir = Files.isDirectory(model) ? model : model.toAbsolutePath().getParent();
        GenerationDefaults.readFromModelDirectory(dir).ifPresent(d -> {
            if (d.eosTokenIds() != null) {
                stops.addAll(d.eosTokenIds());
            }
        });
        if (stops.isEmpty() && tokenizer.isPresent()) {
            for (String t : new String[] {"<|endoftext|>", "<|im_end|>"}) {
                tokenizer.get().tokenId(t).ifPresent(stops::add);
            }
        }
        return stops;
    }
}
