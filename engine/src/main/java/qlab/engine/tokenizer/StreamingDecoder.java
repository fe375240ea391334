package qlab.engine.tokenizer;

import java.util.Arrays;

/**
 * Decodes ids one at a time, for printing tokens as they are generated. Text is released as soon
 * as it is final: a multi-byte character split across tokens is held until its last byte arrives
 * (or proves it invalid). The concatenation of everything {@link #accept} returns followed by
 * {@link #finish} equals {@link Tokenizer#decode} of the same ids. Not thread-safe (one per stream).
 */
public final class StreamingDecoder {
    private final Tokenizer tokenizer;
    private final boolean skipSpecial;
    private byte[] pending = new byte[16];
    private int pendingLength;

    StreamingDecoder(Tokenizer tokenizer, boolean skipSpecial) {
        this.tokenizer = tokenizer;
        this.skipSpecial = skipSpecial;
    }

    /** Adds one id; returns the text that became final (possibly empty). */
    public String accept(int id) {
        byte[] b = tokenizer.bytesOf(id, skipSpecial);
        if (b == null || b.length == 0) {
            return "";
        }
        if (pendingLength + b.length > pending.length) {
            pending = Arrays.copyOf(pending, Math.max(pending.length * 2, pendingLength + b.length));
        }
        System.arraycopy(b, 0, pending, pendingLength, b.length);
        pendingLength += b.length;
        StringBuilder out = new StringBuilder(pendingLength);
        int stopped = Utf8Decoding.decode(pending, 0, pendingLength, out, true);
        System.arraycopy(pending, stopped, pending, 0, pendingLength - stopped);
        pendingLength -= stopped;
        return out.toString();
    }

    /** Ends the stream: bytes of an unfinished character become U+FFFD, as a full decode would. */
    public String finish() {
        String tail = Utf8Decoding.decode(pending, pendingLength);
        pendingLength = 0;
        return tail;
    }
}
