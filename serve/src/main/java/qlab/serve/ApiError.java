package qlab.serve;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

/** A request the server refuses, answered with OpenAI's error object {@code {error: {message, type, param, code}}}. */
final class ApiError extends RuntimeException {

    final int status;
    final String type;
    final String code;
    final String param;

    ApiError(int status, String type, String code, String param, String message) {
        super(message, null, false, false);
        this.status = status;
        this.type = type;
        this.code = code;
        this.param = param;
    }

    /** 400 for a field: its name is the param, and the message names it too. */
    static ApiError invalid(String param, String message) {
        return new ApiError(400, "invalid_request_error", "invalid_value", param, message);
    }

    ObjectNode toJson() {
        ObjectNode root = JsonNodeFactory.instance.objectNode();
        ObjectNode e = root.putObject("error");
        e.put("message", getMessage());
        e.put("type", type);
        if (param == null) {
            e.putNull("param");
        } else {
            e.put("param", param);
        }
        if (code == null) {
            e.putNull("code");
        } else {
            e.put("code", code);
        }
        return root;
    }
}
