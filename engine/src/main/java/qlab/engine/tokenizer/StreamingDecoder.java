package qlab.engine.tokenizer;

import java.util.Arrays;

/**
 * Decodes ids one at a time, for printing tokens as they are generated. Text is released as soon
 * as it is final: a multi-byte character split across tokens is held until its last byte arrives
 * (or proves it invalid). The concatenation of everything {@link #accept} returns followed by
 * {@link #finish} equals {@link Tokenizer#decode} of the same ids. Not thread-safe (one per stream).
 *
 * <p>For a tokenizer with a decoder chain (not byte-level), the ids are kept and the text of all of
 * them is decoded again up to the last token after which nothing can change (a run of byte-fallback
 * tokens may still be completed); what is new past the text already released is returned.
 */
public final class StreamingDecoder {
    private final Tokenizer tokenizer;
    private final boolean skipSpecial;
    private byte[] pending = new byte[16];
    private int pendingLength;
    /** Decoder-chain tokenizers: the ids so far and the length of the text released. */
    private int[] ids = new int[16];
    private int idCount;
    private int released;

    StreamingDecoder(Tokenizer tokenizer, boolean skipSpecial) {
        this.tokenizer = tokenizer;
        this.skipSpecial = skipSpecial;
    }

    /** Adds one id; returns the text that became final (possibly empty). */
    public String accept(int id) {
        if (tokenizer.decoderChain() != null) {
            return acceptByChain(id);
        }
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

    private String acceptByChain(int id) {
        if (idCount == ids.length) {
            ids = Arrays.copyOf(ids, idCount * 2);
        }
        ids[idCount++] = id;
        String text = tokenizer.visibleText(id, skipSpecial);
        if (text == null || tokenizer.decoderChain().isOpenAfter(text)) {
            return "";
        }
        return release(tokenizer.decodeByChain(ids, idCount, skipSpecial));
    }

    private String release(String decoded) {
        String fresh = decoded.substring(Math.min(released, decoded.length()));
        released = decoded.length();
        return fresh;
    }

    /** Ends the stream: bytes of an unfinished character become U+FFFD, as a full decode would. */
    public String finish() {
        if (tokenizer.decoderChain() != null) {
            String tail = release(tokenizer.decodeByChain(ids, idCount, skipSpecial));
            idCount = 0;
            released = 0;
            return tail;
        }
        String tail = Utf8Decoding.decode(pending, pendingLength);
        pendingLength = 0;
        return tail;
    }
}
