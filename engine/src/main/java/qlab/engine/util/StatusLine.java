package qlab.engine.util;

import java.io.PrintWriter;
import java.time.Duration;

/**
 * One line of status on stderr for long work, kept apart from stdout (which may be JSON). On a
 * terminal the line is rewritten in place ({@code \r}); into a file or a pipe (a log, CI) it is
 * written as whole lines, one whenever its state changed and at least {@link #LOG_EVERY_MILLIS}
 * after the last, so a log reads as a trace instead of hundreds of overwrites.
 */
public final class StatusLine {

    /** Least time between two lines written to a log. */
    public static final long LOG_EVERY_MILLIS = 10_000;

    /**
     * Set by the launcher to whether its stderr is a terminal: it pipes the JVM's stderr through a
     * filter, so the JVM cannot see for itself.
     */
    public static final String STDERR_TERMINAL_PROPERTY = "qlab.stderrTerminal";

    private final PrintWriter out;
    private final boolean inPlace;
    private int lastWidth;
    private String lastLogged;
    private long lastLoggedAt = Long.MIN_VALUE / 2;

    public StatusLine(PrintWriter out, boolean inPlace) {
        this.out = out;
        this.inPlace = inPlace;
    }

    /** Whether stderr is an interactive terminal: as the launcher saw it, else as the JVM's console says. */
    public static boolean stderrIsTerminal() {
        String told = System.getProperty(STDERR_TERMINAL_PROPERTY);
        if (told != null) {
            return Boolean.parseBoolean(told);
        }
        return System.console() != null && System.console().isTerminal();
    }

    public boolean inPlace() {
        return inPlace;
    }

    /**
     * Shows {@code line}. Into a log it is written only when {@code state} (the part of the line
     * that is not the clock) changed and the last line is old enough, or when {@code force}.
     */
    public synchronized void show(String line, String state, long nowMillis, boolean force) {
        if (!inPlace) {
            if (force || !state.equals(lastLogged) && nowMillis - lastLoggedAt >= LOG_EVERY_MILLIS) {
                out.println(line);
                out.flush();
                lastLogged = state;
                lastLoggedAt = nowMillis;
            }
            return;
        }
        int pad = Math.max(0, lastWidth - line.length());
        out.print("\r" + line + " ".repeat(pad));
        out.flush();
        lastWidth = line.length();
    }

    /** Ends an in-place line with a newline, so what follows starts on a line of its own. */
    public synchronized void end() {
        if (lastWidth > 0) {
            out.println();
            out.flush();
            lastWidth = 0;
        }
    }

    /** mm:ss, or h:mm:ss from an hour on. */
    public static String clock(long millis) {
        Duration d = Duration.ofMillis(Math.max(0, millis));
        long h = d.toHours();
        return h > 0 ? String.format("%d:%02d:%02d", h, d.toMinutesPart(), d.toSecondsPart())
                : String.format("%02d:%02d", d.toMinutesPart(), d.toSecondsPart());
    }
}
