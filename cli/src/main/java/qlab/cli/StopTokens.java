package qlab.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.Optional;
import java.util.Set;
import qlab.engine.sampling.GenerationDefaults;
import qlab.engine.tokenizer.Tokenizer;

/**
 * Tokens that end a generation: the model's eos_token_id list from generation_config.json when it
 * has one, otherwise the tokenizer's end-of-text and end-of-turn tokens.
 */
final class StopTokens {

    private StopTokens() {}

    static Set<Integer> forModel(Path model, Optional<Tokenizer> tokenizer) {
        Set<Integer> stops = new LinkedHashSet<>();
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
