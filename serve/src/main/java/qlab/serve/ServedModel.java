package qlab.serve;

import java.util.Set;
import qlab.engine.chat.ChatTemplate;
import qlab.engine.model.Transformer;
import qlab.engine.tokenizer.Tokenizer;

/**
 * A model ready to serve: the forward pass, its tokenizer, its chat template (null: no chat
 * endpoint), and the tokens that end a generation.
 *
 * @param id the name /v1/models lists and responses carry
 */
public record ServedModel(String id, Transformer model, Tokenizer tokenizer, ChatTemplate template, Set<Integer> stopIds) {}
