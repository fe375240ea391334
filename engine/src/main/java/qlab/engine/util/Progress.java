package qlab.engine.util;

/**
 * Where a long loop reports the work it has done (tokens evaluated, weights quantized), in the
 * units its caller counted the total in. {@link #NONE} when nobody watches.
 */
@FunctionalInterface
public interface Progress {

    Progress NONE = units -> { };

    /** {@code units} more done; callable from any thread. */
    void advance(long units);
}
