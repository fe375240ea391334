package qlab.engine.util;

import java.io.PrintWriter;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The progress of one command's long work as a {@link StatusLine}: what it does, units done of
 * the total, the rate, elapsed time and an ETA from the work left at the rate so far:
 * {@code ppl | 1,536/20,480 tokens | 412 tokens/s | 00:04 elapsed | ETA 00:46}.
 */
public final class ProgressLine implements Progress, AutoCloseable {

    /** Least time between two redraws in place: a terminal need not show every window. */
    static final long REDRAW_EVERY_MILLIS = 250;

    private final StatusLine line;
    private final String unit;
    private final long total;
    private final AtomicLong done = new AtomicLong();
    private final long startNanos = System.nanoTime();
    private volatile String label;
    private long lastDrawn = Long.MIN_VALUE / 2;

    public ProgressLine(String label, long total, String unit, PrintWriter out, boolean inPlace) {
        this(label, total, unit, new StatusLine(out, inPlace));
    }

    private ProgressLine(String label, long total, String unit, StatusLine line) {
        this.label = label;
        this.total = total;
        this.unit = unit;
        this.line = line;
        draw(false);
    }

    /** A progress line that counts and shows nothing (progress not asked for). */
    public static ProgressLine hidden() {
        return new ProgressLine("", 0, "", null);
    }

    /** What the work is doing now (kl: its baseline, then the scored model), shown in front. */
    public void stage(String label) {
        this.label = label;
        draw(true);
    }

    @Override
    public void advance(long units) {
        done.addAndGet(units);
        draw(false);
    }

    /** Draws the line as it is at the end and moves to the next line. */
    @Override
    public void close() {
        draw(true);
        if (line != null) {
            line.end();
        }
    }

    private synchronized void draw(boolean force) {
        if (line == null) {
            return;
        }
        long now = (System.nanoTime() - startNanos) / 1_000_000;
        if (!force && line.inPlace() && now - lastDrawn < REDRAW_EVERY_MILLIS) {
            return;
        }
        lastDrawn = now;
        long d = done.get();
        String state = label + " | " + d;
        line.show(line(label, d, total, unit, now), state, now, force);
    }

    static String line(String label, long done, long total, String unit, long elapsedMillis) {
        String rate = elapsedMillis == 0 || done == 0 ? "--" : amount(done * 1000.0 / elapsedMillis);
        String eta = done == 0 ? "--:--" : StatusLine.clock(elapsedMillis * Math.max(0, total - done) / done);
        return String.format("%s | %s/%s %s | %s %s/s | %s elapsed | ETA %s", label, amount(done), amount(total), unit,
                rate, unit, StatusLine.clock(elapsedMillis), eta);
    }

    /** 1,536 below ten million, else 12.3M: the line stays short for weights counts. */
    private static String amount(double v) {
        return v >= 1e7 ? String.format("%.1fM", v / 1e6) : String.format("%,d", Math.round(v));
    }
}
