package qlab.engine.eval;

import java.util.ArrayList;
import java.util.List;
import qlab.engine.QlabException;

/**
 * Non-overlapping context windows over a token stream, each evaluated as an independent sequence
 * starting at position 0, and which of their tokens are scored.
 */
public final class Windows {

    /**
     * tokens [start, start + length) of the stream; window positions firstScored .. length-1 are
     * scored, each predicted from the logits of the position before it.
     */
    public record Window(int start, int length, int firstScored) {
        public int scored() {
            return length - firstScored;
        }
    }

    private Windows() {}

    public static List<Window> plan(int tokens, int ctx, ScoringMode mode) {
        if (ctx < 2) {
            throw new QlabException("--ctx must be at least 2, got " + ctx);
        }
        List<Window> out = new ArrayList<>();
        for (int start = 0; start < tokens; start += ctx) {
            int len = Math.min(ctx, tokens - start);
            if (mode == ScoringMode.SECOND_HALF) {
                if (len == ctx && ctx / 2 + 1 < ctx) {
                    out.add(new Window(start, len, ctx / 2 + 1));
                }
            } else if (len >= 2) {
                out.add(new Window(start, len, 1));
            }
        }
        if (out.isEmpty()) {
            throw new QlabException("the text has " + tokens + " tokens, too short for one window of --ctx " + ctx
                    + (mode == ScoringMode.SECOND_HALF ? " (second-half scoring needs a full window)" : ""));
        }
        return out;
    }

    /**
     * The tokens the windows score, in scoring order: token start+p of each window for p from
     * firstScored to length-1 (what {@link WindowScorer} hands its visitor as the target).
     */
    public static int[] scoredTargets(int[] tokens, int ctx, ScoringMode mode) {
        List<Window> windows = plan(tokens.length, ctx, mode);
        int[] out = new int[scoredCount(windows)];
        int i = 0;
        for (Window w : windows) {
            for (int p = w.firstScored(); p < w.length(); p++) {
                out[i++] = tokens[w.start() + p];
            }
        }
        return out;
    }

    public static int scoredCount(List<Window> windows) {
        int n = 0;
        for (Window w : windows) {
            n += w.scored();
        }
        return n;
    }
}
