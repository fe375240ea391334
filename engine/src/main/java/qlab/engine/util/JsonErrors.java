package qlab.engine.util;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonLocation;
import java.util.regex.Pattern;

/**
 * Jackson's parse errors as the one-line reason a user reads. Jackson's own messages embed
 * locations as {@code [Source: REDACTED (`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled);
 * line: 1, column: 11]}, a library setting the user cannot act on: those become "line 1, column 11".
 */
public final class JsonErrors {

    private static final Pattern EMBEDDED_LOCATION =
            Pattern.compile("\\[Source: [^\\]]*?; line: (\\d+), column: (\\d+)\\]");

    private JsonErrors() {
    }

    /** The reason, one line, without the location of the error (see {@link #where}). */
    public static String why(JacksonException e) {
        String message = e.getOriginalMessage();
        if (message == null || message.isBlank()) {
            return e.getClass().getSimpleName();
        }
        message = EMBEDDED_LOCATION.matcher(message).replaceAll("line $1, column $2");
        return message.replaceAll("\\s*\\R\\s*", " ").trim();
    }

    /** " at line L, column C", or "" when Jackson knows no location. */
    public static String where(JacksonException e) {
        JsonLocation at = e.getLocation();
        return at == null || at.getLineNr() < 1 ? "" : " at line " + at.getLineNr() + ", column " + at.getColumnNr();
    }
}
