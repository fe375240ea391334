package qlab.serve;

import java.util.List;

/**
 * Cuts generated text at the first of a request's stop strings. Text is released as it comes,
 * except a tail that could still be the start of a stop string, which waits for the next piece.
 */
final class StopStrings {

    private final List<String> stops;
    private final StringBuilder held = new StringBuilder();
    private boolean stopped;

    StopStrings(List<String> stops) {
        this.stops = List.copyOf(stops);
    }

    boolean stopped() {
        return stopped;
    }

    /** Adds generated text; returns what can be shown now (everything before a stop string, once met). */
    String accept(String fresh) {
        if (stopped) {
            return "";
        }
        held.append(fresh);
        if (stops.isEmpty()) {
            return release(held.length());
        }
        int cut = -1;
        for (String s : stops) {
            int at = held.indexOf(s);
            if (at >= 0 && (cut < 0 || at < cut)) {
                cut = at;
            }
        }
        if (cut >= 0) {
            stopped = true;
            String out = held.substring(0, cut);
            held.setLength(0);
            return out;
        }
        return release(held.length() - pendingPrefix());
    }

    /** The end of the text: whatever was held back is shown. */
    String flush() {
        return stopped ? "" : release(held.length());
    }

    /** Length of the longest tail of the held text that begins some stop string. */
    private int pendingPrefix() {
        int best = 0;
        String text = held.toString();
        for (String s : stops) {
            for (int k = Math.min(s.length() - 1, text.length()); k > best; k--) {
                if (text.regionMatches(text.length() - k, s, 0, k)) {
                    best = k;
                    break;
                }
            }
        }
        return best;
    }

    private String release(int n) {
        String out = held.substring(0, n);
        held.delete(0, n);
        return out;
    }
}
