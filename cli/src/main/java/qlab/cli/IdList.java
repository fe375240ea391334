package qlab.cli;

import qlab.engine.QlabException;

/** Parses token-id lists such as "1,2,3" or "1 2 3". */
final class IdList {

    private IdList() {}

    static int[] parse(String option, String text) {
        String[] parts = text.trim().split("[,\\s]+");
        if (text.isBlank()) {
            throw new QlabException(option + ": no token ids given");
        }
        int[] ids = new int[parts.length];
        for (int i = 0; i < parts.length; i++) {
            try {
                ids[i] = Integer.parseInt(parts[i]);
            } catch (NumberFormatException e) {
                throw new QlabException(option + ": \"" + parts[i] + "\" is not a token id");
            }
            if (ids[i] < 0) {
                throw new QlabException(option + ": token id " + ids[i] + " is negative");
            }
        }
        return ids;
    }
}
