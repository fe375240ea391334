package qlab.engine.tokenizer;

/**
 * The {@code Metaspace} pre-tokenizer: every ASCII space becomes the replacement character
 * ({@code ▁}); the replacement is put in front of a piece that does not start with it, always, or
 * only for the piece at the very start of the input ({@code prepend_scheme} {@code first}: not
 * after an added token), or never; with {@code split}, the text is cut before every replacement
 * character (each {@code ▁} opens a word), otherwise it stays one piece.
 */
final class MetaspaceSplitter implements PieceSplitter {
    enum PrependScheme { ALWAYS, FIRST, NEVER }

    private final String replacement;
    private final PrependScheme prependScheme;
    private final boolean split;

    MetaspaceSplitter(String replacement, PrependScheme prependScheme, boolean split) {
        this.replacement = replacement;
        this.prependScheme = prependScheme;
        this.split = split;
    }

    @Override
    public void split(String text, int start, int end, PieceConsumer out) {
        split(text, start, end, false, out);
    }

    @Override
    public void split(String text, int start, int end, boolean atInputStart, PieceConsumer out) {
        StringBuilder b = new StringBuilder(end - start + 8);
        for (int i = start; i < end; i++) {
            char c = text.charAt(i);
            if (c == ' ') {
                b.append(replacement);
            } else {
                b.append(c);
            }
        }
        boolean prepend = switch (prependScheme) {
            case ALWAYS -> true;
            case FIRST -> atInputStart;
            case NEVER -> false;
        };
        if (prepend && !startsWith(b, replacement)) {
            b.insert(0, replacement);
        }
        String s = b.toString();
        if (!split) {
            out.accept(s, 0, s.length());
            return;
        }
        int pieceStart = 0;
        int at = s.indexOf(replacement, 1);
        while (at >= 0) {
            out.accept(s, pieceStart, at);
            pieceStart = at;
            at = s.indexOf(replacement, at + replacement.length());
        }
        out.accept(s, pieceStart, s.length());
    }

    private static boolean startsWith(StringBuilder b, String prefix) {
        return b.length() >= prefix.length() && b.substring(0, prefix.length()).equals(prefix);
    }
}
