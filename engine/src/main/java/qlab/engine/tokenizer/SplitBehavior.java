package qlab.engine.tokenizer;

/**
 * What a splitting pre-tokenizer does with the delimiters it finds (the reference's
 * {@code SplitDelimiterBehavior}). Input is the text cut into alternating stretches, each either a
 * match (delimiter) or not; output is the pieces, empty ones dropped.
 */
enum SplitBehavior {
    /** Delimiters are dropped. */
    REMOVED,
    /** Delimiters and the text between them are pieces of their own. */
    ISOLATED,
    /** A delimiter joins the piece before it (unless that piece is a delimiter too). */
    MERGED_WITH_PREVIOUS,
    /** A delimiter joins the piece after it (unless that piece is a delimiter too). */
    MERGED_WITH_NEXT,
    /** Consecutive delimiters form one piece. */
    CONTIGUOUS;

    /** The reference's name ({@code "MergedWithNext"}), or null when there is none by that name. */
    static SplitBehavior fromJson(String name) {
        return switch (name) {
            case "Removed" -> REMOVED;
            case "Isolated" -> ISOLATED;
            case "MergedWithPrevious" -> MERGED_WITH_PREVIOUS;
            case "MergedWithNext" -> MERGED_WITH_NEXT;
            case "Contiguous" -> CONTIGUOUS;
            default -> null;
        };
    }

    /**
     * Emits the pieces of {@code text} given its stretches: {@code bounds[2k], bounds[2k+1]} delimit
     * stretch k, {@code isMatch[k]} says whether it is a delimiter. Stretches are adjacent and non-empty.
     */
    void emit(String text, int[] bounds, boolean[] isMatch, int count, PieceSplitter.PieceConsumer out) {
        switch (this) {
            case REMOVED -> {
                for (int k = 0; k < count; k++) {
                    if (!isMatch[k]) {
                        out.accept(text, bounds[2 * k], bounds[2 * k + 1]);
                    }
                }
            }
            case ISOLATED -> {
                for (int k = 0; k < count; k++) {
                    out.accept(text, bounds[2 * k], bounds[2 * k + 1]);
                }
            }
            case MERGED_WITH_PREVIOUS -> {
                int k = 0;
                while (k < count) {
                    int start = bounds[2 * k];
                    int end = bounds[2 * k + 1];
                    if (!isMatch[k] && k + 1 < count && isMatch[k + 1]) {
                        end = bounds[2 * k + 3];
                        k++;
                    }
                    out.accept(text, start, end);
                    k++;
                }
            }
            case MERGED_WITH_NEXT -> {
                int k = 0;
                while (k < count) {
                    int start = bounds[2 * k];
                    int end = bounds[2 * k + 1];
                    if (isMatch[k] && k + 1 < count && !isMatch[k + 1]) {
                        end = bounds[2 * k + 3];
                        k++;
                    }
                    out.accept(text, start, end);
                    k++;
                }
            }
            case CONTIGUOUS -> {
                int k = 0;
                while (k < count) {
                    int start = bounds[2 * k];
                    int j = k;
                    while (j + 1 < count && isMatch[j + 1] == isMatch[k]) {
                        j++;
                    }
                    out.accept(text, start, bounds[2 * j + 1]);
                    k = j + 1;
                }
            }
        }
    }
}
