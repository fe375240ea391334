package qlab.engine;

/**
 * A user error: bad input, a missing file, a field out of range. The command line prints
 * {@link #getMessage()} as one line and exits non-zero, without a stack trace. Messages name
 * the file and the field, e.g. {@code config.json: field "num_attention_heads" is missing}.
 */
public class QlabException extends RuntimeException {
    public QlabException(String message) {
        super(message);
    }

    public QlabException(String message, Throwable cause) {
        super(message, cause);
    }
}
