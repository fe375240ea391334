package qlab.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.Optional;
import java.util.Set;
import qlab.engine.chat.ChatTemplate;
import qlab.engine.gguf.GgufFile;
import qlab.engine.sampling.GenerationDefaults;
import qlab.engine.tokenizer.Tokenizer;
import qlab.quant.checkpoint.GgufCheckpoint;

/**
 * Tokens that end a generation: the model's eos_token_id list from generation_config.json when it
 * has one, otherwise the eos_token_id of config.json together with the tokenizer's end-of-text and
 * end-of-turn tokens; with a chat template, also the token that closes its turns.
 */
final class StopTokens {

    private StopTokens() {}

    static Set<Integer> forModel(Path model, Optional<Tokenizer> tokenizer) {
        return forModel(model, tokenizer, Optional.empty());
    }

    static Set<Integer> forModel(Path model, Optional<Tokenizer> tokenizer, Optional<ChatTemplate> template) {
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
        Path dir = TextTokens.directory(model);
        GenerationDefaults.readFromModelDirectory(dir).ifPresent(d -> {
            if (d.eosTokenIds() != null) {
                stops.addAll(d.eosTokenIds());
            }
        });
        if (stops.isEmpty() && tokenizer.isPresent()) {
            stops.addAll(configEosIds(dir.resolve("config.json")));
            for (String t : new String[] {"<|endoftext|>", "<|im_end|>", "<|eot_id|>", "<|end_of_text|>", "</s>"}) {
                tokenizer.get().tokenId(t).ifPresent(stops::add);
            }
        }
        if (template.isPresent() && tokenizer.isPresent()) {
            tokenizer.get().tokenId(template.get().endOfTurn()).ifPresent(stops::add);
        }
        return stops;
    }

    /** eos_token_id of config.json (a number or a list); empty when absent or unreadable as such. */
    private static Set<Integer> configEosIds(Path configFile) {
        Set<Integer> ids = new LinkedHashSet<>();
        if (!Files.isRegularFile(configFile)) {
            return ids;
        }
        try {
            JsonNode eos = new ObjectMapper().readTree(configFile.toFile()).get("eos_token_id");
            if (eos != null && eos.canConvertToInt()) {
                ids.add(eos.asInt());
            } else if (eos != null && eos.isArray()) {
                eos.forEach(e -> {
                    if (e.canConvertToInt()) {
                        ids.add(e.asInt());
                    }
                });
            }
        } catch (IOException e) {
            // config.json is validated where the model is loaded; here it only supplies a default.
        }
        return ids;
    }
}
