package qlab.serve;

import qlab.engine.sampling.SamplingConfig;

/**
 * One sequence to run: a prompt, how to sample its continuation, what to report.
 *
 * @param maxTokens   tokens to generate at most (0: only score the prompt, with echo)
 * @param topLogprobs -1: no log-probabilities; otherwise report each token's and this many alternatives
 * @param echo        score the prompt's own tokens ({@link SequenceListener#promptScored}); such a
 *                    prompt needs every position's logits, so it is computed in full, not taken from
 *                    the prefix cache
 * @param ignoreEos   generate through the model's stop tokens (for load tests of a fixed length)
 */
public record SequenceRequest(int[] prompt, SamplingConfig sampling, int maxTokens, int topLogprobs, boolean echo,
                              boolean ignoreEos, SequenceListener listener) {}
