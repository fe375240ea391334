package qlab.pipeline;

import java.io.Serializable;

/**
 * What the quality measurement reads.
 *
 * @param textPath absolute path of the evaluation text
 * @param textHash hash of its contents (results depend on the text, not on where it lies)
 * @param ctx      context length of each evaluation window, in tokens
 * @param tokens   token budget: how many tokens of the text are scored at most
 */
public record EvalSettings(String textPath, String textHash, int ctx, int tokens) implements Serializable {
}
