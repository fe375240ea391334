package qlab.serve;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;

/** What a route writes its answer through: one JSON body, or a stream of server-sent events. */
interface Exchange {

    void json(int status, JsonNode body) throws IOException;

    /** Sends the headers of a {@code text/event-stream} answer (status 200). */
    void startEvents() throws IOException;

    /** One event, {@code data: <data>} and a blank line, flushed at once. */
    void event(String data) throws IOException;

    /** Ends the event stream. */
    void endEvents() throws IOException;

    /** Runs {@code action} if the connection fails before the answer is complete (the client went away). */
    void onDisconnect(Runnable action);
}
