package qlab.serve;

/**
 * What a running sequence reports to the request that started it. Called on the scheduler's
 * thread between model steps: implementations hand the event on and return, never block.
 */
public interface SequenceListener {

    /** Why a sequence ended, in OpenAI's words. */
    enum Finish {
        /** A stop token or a stop string. */
        STOP("stop"),
        /** max_tokens reached, or the context is full. */
        LENGTH("length");

        public final String openAiName;

        Finish(String openAiName) {
            this.openAiName = openAiName;
        }
    }

    /** With echo: the prompt's tokens scored, entry 0 null (nothing predicts the first token). */
    default void promptScored(TokenLogprob[] prompt) {}

    /**
     * A generated token (never a stop token). Its log-probability is NaN unless log-probabilities
     * were asked for.
     *
     * @return false to end the sequence here (a stop string was met)
     */
    boolean token(TokenLogprob token);

    /**
     * The sequence ended.
     *
     * @param cachedTokens prompt tokens whose KV came from the prefix cache
     */
    void finished(Finish reason, int promptTokens, int completionTokens, int cachedTokens);

    /** The sequence failed inside the engine; nothing more follows. */
    void failed(String message);
}
