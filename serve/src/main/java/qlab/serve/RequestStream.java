package qlab.serve;

import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import qlab.engine.tokenizer.StreamingDecoder;
import qlab.engine.tokenizer.Tokenizer;

/**
 * One sequence's events, turned into text on the scheduler's thread (so a stop string can end the
 * sequence at once) and queued for the HTTP handler, which writes them at its own pace.
 */
final class RequestStream implements SequenceListener {

    sealed interface Event permits Piece, PromptScores, Done, Failed {}

    /** Text that became final, and the token that completed it (null for the held-back tail at the end). */
    record Piece(String text, TokenLogprob token, int textOffset) implements Event {}

    record PromptScores(TokenLogprob[] scores) implements Event {}

    record Done(Finish reason, int promptTokens, int completionTokens, int cachedTokens) implements Event {}

    record Failed(String message) implements Event {}

    final BlockingQueue<Event> events = new LinkedBlockingQueue<>();
    private final StreamingDecoder decoder;
    private final StopStrings stops;
    private int offset;

    /** @param textOffset characters before the first generated one (the echoed prompt's length, or 0) */
    RequestStream(Tokenizer tokenizer, List<String> stopStrings, int textOffset) {
        this.decoder = tokenizer.streamingDecoder(false);
        this.stops = new StopStrings(stopStrings);
        this.offset = textOffset;
    }

    @Override
    public void promptScored(TokenLogprob[] prompt) {
        events.add(new PromptScores(prompt));
    }

    @Override
    public boolean token(TokenLogprob token) {
        String text = stops.accept(decoder.accept(token.id()));
        events.add(new Piece(text, token, offset));
        offset += text.length();
        return !stops.stopped();
    }

    @Override
    public void finished(Finish reason, int promptTokens, int completionTokens, int cachedTokens) {
        String tail = stops.accept(decoder.finish());
        tail += stops.flush();
        if (!tail.isEmpty()) {
            events.add(new Piece(tail, null, offset));
            offset += tail.length();
        }
        events.add(new Done(reason, promptTokens, completionTokens, cachedTokens));
    }

    @Override
    public void failed(String message) {
        events.add(new Failed(message));
    }
}
