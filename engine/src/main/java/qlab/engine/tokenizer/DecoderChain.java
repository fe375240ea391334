package qlab.engine.tokenizer;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The {@code decoder} of a tokenizer that is not byte-level: token strings pass through each step in
 * turn ({@code Replace}, {@code ByteFallback}, {@code Fuse}, {@code Strip}, {@code Metaspace}), and
 * the resulting strings are concatenated. With no decoder at all the reference joins the tokens
 * with single spaces.
 */
final class DecoderChain {
    /** One decoder: a list of token strings in, a list out. */
    interface Step {
        List<String> apply(List<String> tokens);
    }

    private final List<Step> steps;
    private final boolean joinWithSpaces;

    /** @param steps null when the file has no decoder (tokens are joined with spaces) */
    DecoderChain(List<Step> steps) {
        this.steps = steps == null ? List.of() : List.copyOf(steps);
        this.joinWithSpaces = steps == null;
    }

    String decode(List<String> tokens) {
        List<String> t = tokens;
        for (Step step : steps) {
            t = step.apply(t);
        }
        return String.join(joinWithSpaces ? " " : "", t);
    }

    /**
     * Whether the decoded text of tokens ending with {@code lastToken} can still change once more tokens
     * arrive (rather than only grow): a run of byte tokens may be completed, and a {@code Strip} from
     * the end acts on whatever comes last.
     */
    boolean isOpenAfter(String lastToken) {
        for (Step step : steps) {
            if (step instanceof Strip strip && strip.stop > 0) {
                return true;
            }
            if (step instanceof ByteFallback && ByteFallback.byteOf(lastToken) >= 0) {
                return true;
            }
        }
        return false;
    }

    // ---------------------------------------------------------------- steps

    /** {@code Replace} on each token, literal pattern. */
    record ReplaceLiteral(String pattern, String content) implements Step {
        @Override
        public List<String> apply(List<String> tokens) {
            List<String> out = new ArrayList<>(tokens.size());
            for (String t : tokens) {
                out.add(t.replace(pattern, content));
            }
            return out;
        }
    }

    /** {@code Replace} on each token, regex pattern, literal content. */
    record ReplaceRegex(java.util.regex.Pattern pattern, String content) implements Step {
        @Override
        public List<String> apply(List<String> tokens) {
            String literal = java.util.regex.Matcher.quoteReplacement(content);
            List<String> out = new ArrayList<>(tokens.size());
            for (String t : tokens) {
                out.add(pattern.matcher(t).replaceAll(literal));
            }
            return out;
        }
    }

    /**
     * {@code ByteFallback}: each run of consecutive {@code <0xNN>} tokens becomes the text of its bytes
     * when they are valid UTF-8, otherwise one U+FFFD per byte of the run (not per invalid subsequence).
     */
    static final class ByteFallback implements Step {
        /**
         * The byte a {@code <0xNN>} token stands for, or -1: two ASCII hex digits in either case, or, as
         * the reference's integer parser also accepts, a plus sign and one digit.
         */
        static int byteOf(String token) {
            if (token.length() != 6 || !token.startsWith("<0x") || token.charAt(5) != '>') {
                return -1;
            }
            int lo = hexDigit(token.charAt(4));
            char first = token.charAt(3);
            int hi = first == '+' ? 0 : hexDigit(first);
            return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
        }

        private static int hexDigit(char c) {
            return c < 0x80 ? Character.digit(c, 16) : -1;
        }

        @Override
        public List<String> apply(List<String> tokens) {
            List<String> out = new ArrayList<>(tokens.size());
            byte[] run = new byte[16];
            int n = 0;
            for (String t : tokens) {
                int b = byteOf(t);
                if (b >= 0) {
                    if (n == run.length) {
                        run = java.util.Arrays.copyOf(run, n * 2);
                    }
                    run[n++] = (byte) b;
                    continue;
                }
                flush(run, n, out);
                n = 0;
                out.add(t);
            }
            flush(run, n, out);
            return out;
        }

        private static void flush(byte[] run, int n, List<String> out) {
            if (n == 0) {
                return;
            }
            try {
                out.add(StandardCharsets.UTF_8.newDecoder()
                        .onMalformedInput(CodingErrorAction.REPORT)
                        .onUnmappableCharacter(CodingErrorAction.REPORT)
                        .decode(ByteBuffer.wrap(run, 0, n)).toString());
            } catch (CharacterCodingException e) {
                for (int i = 0; i < n; i++) {
                    out.add("\uFFFD");
                }
            }
        }
    }

    /** {@code Fuse}: all tokens become one string. */
    static final class Fuse implements Step {
        @Override
        public List<String> apply(List<String> tokens) {
            return tokens.isEmpty() ? tokens : List.of(String.join("", tokens));
        }
    }

    /** {@code Strip}: from each token, up to {@code start} leading and {@code stop} trailing {@code content} characters. */
    record Strip(int content, int start, int stop) implements Step {
        @Override
        public List<String> apply(List<String> tokens) {
            List<String> out = new ArrayList<>(tokens.size());
            for (String t : tokens) {
                int[] cps = t.codePoints().toArray();
                int from = 0;
                while (from < start && from < cps.length && cps[from] == content) {
                    from++;
                }
                int to = cps.length;
                for (int k = 0; k < stop && to > from && cps[to - 1] == content; k++) {
                    to--;
                }
                out.add(new String(cps, from, to - from));
            }
            return out;
        }
    }

    /**
     * {@code Metaspace} decoder: the replacement character becomes a space, except in the first token
     * (unless the prepend scheme is {@code never}), where it is removed.
     */
    record Metaspace(String replacement, boolean dropInFirst) implements Step {
        @Override
        public List<String> apply(List<String> tokens) {
            List<String> out = new ArrayList<>(tokens.size());
            for (int i = 0; i < tokens.size(); i++) {
                out.add(tokens.get(i).replace(replacement, i == 0 && dropInFirst ? "" : " "));
            }
            return out;
        }
    }
}
