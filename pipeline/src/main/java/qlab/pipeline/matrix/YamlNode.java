package qlab.pipeline.matrix;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import qlab.engine.QlabException;
import qlab.engine.util.JsonErrors;

/**
 * A YAML document as a tree that remembers the line of every value, so that a validation error can
 * name the line and key. Jackson's tree model drops locations; its streaming parser keeps them.
 */
public sealed interface YamlNode {

    int line();

    /** A mapping; keys keep their file order. */
    record Mapping(Map<String, YamlNode> entries, Map<String, Integer> keyLines, int line) implements YamlNode {
        /** The line of a key (values of nested blocks start on later lines). */
        public int keyLine(String key) {
            return keyLines.getOrDefault(key, line);
        }
    }

    record Sequence(List<YamlNode> items, int line) implements YamlNode {
    }

    /**
     * A scalar. {@code token} tells what YAML made of it: a number, a string, true/false or null.
     */
    record Scalar(String text, JsonToken token, int line) implements YamlNode {
        public boolean isNull() {
            return token == JsonToken.VALUE_NULL;
        }
    }

    /** Parses a file; a syntax error or a repeated key becomes one line naming the file and line. */
    static YamlNode parse(Path file) {
        String name = file.getFileName().toString();
        if (!Files.isRegularFile(file)) {
            throw new QlabException(file + ": no such file");
        }
        try (JsonParser p = new YAMLFactory().createParser(file.toFile())) {
            JsonToken first = p.nextToken();
            if (first == null) {
                throw new QlabException(name + ": the file is empty");
            }
            YamlNode root = read(p, name, 0);
            if (p.nextToken() != null) {
                throw new QlabException(name + ":" + p.currentLocation().getLineNr()
                        + ": only one YAML document is allowed");
            }
            return root;
        } catch (JacksonException e) {
            int line = e.getLocation() == null ? 0 : e.getLocation().getLineNr();
            throw new QlabException(name + ":" + line + ": malformed YAML: " + JsonErrors.why(e));
        } catch (IOException e) {
            throw new QlabException(name + ": cannot read: " + e.getMessage());
        }
    }

    /**
     * @param keyLine line of the key whose value this is (0 for the root and list items): a nested
     *                block is reported at its key, since its own first token is on a later line
     */
    private static YamlNode read(JsonParser p, String name, int keyLine) throws IOException {
        JsonToken t = p.currentToken();
        boolean block = t == JsonToken.START_OBJECT || t == JsonToken.START_ARRAY;
        int line = block && keyLine > 0 ? keyLine : p.currentTokenLocation().getLineNr();
        if (t == JsonToken.START_OBJECT) {
            Map<String, YamlNode> entries = new LinkedHashMap<>();
            Map<String, Integer> keyLines = new LinkedHashMap<>();
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String key = p.currentName();
                int entryLine = p.currentTokenLocation().getLineNr();
                p.nextToken();
                YamlNode value = read(p, name, entryLine);
                if (entries.put(key, value) != null) {
                    throw new QlabException(name + ":" + entryLine + ": " + SweepFileParser.oneLine("key \"" + key + "\" appears twice"));
                }
                keyLines.put(key, entryLine);
            }
            return new Mapping(entries, keyLines, line);
        }
        if (t == JsonToken.START_ARRAY) {
            List<YamlNode> items = new ArrayList<>();
            while (p.nextToken() != JsonToken.END_ARRAY) {
                items.add(read(p, name, 0));
            }
            return new Sequence(items, line);
        }
        return new Scalar(t == JsonToken.VALUE_NULL ? null : p.getText(), t, line);
    }
}
