package qlab.engine.tokenizer;

/** One pre-tokenization step: cuts {@code text[start, end)} into pieces, handed on in order. */
interface PieceSplitter {
    void split(String text, int start, int end, PieceConsumer out);

    /**
     * The same, told whether {@code text[start, ...)} begins at the very start of the text being encoded
     * (the reference's "original offset 0"); only steps that depend on it override this.
     */
    default void split(String text, int start, int end, boolean atInputStart, PieceConsumer out) {
        split(text, start, end, out);
    }

    /** Receives a piece {@code text[start, end)}; never called with an empty piece. */
    @FunctionalInterface
    interface PieceConsumer {
        void accept(String text, int start, int end);
    }
}
