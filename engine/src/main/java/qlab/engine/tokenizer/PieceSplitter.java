package qlab.engine.tokenizer;

/** One pre-tokenization step: cuts {@code text[start, end)} into pieces, handed on in order. */
interface PieceSplitter {
    void split(String text, int start, int end, PieceConsumer out);

    /** Receives a piece {@code text[start, end)}; never called with an empty piece. */
    @FunctionalInterface
    interface PieceConsumer {
        void accept(String text, int start, int end);
    }
}
