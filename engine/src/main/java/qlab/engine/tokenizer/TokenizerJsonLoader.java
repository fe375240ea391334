package qlab.engine.tokenizer;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import qlab.engine.QlabException;

/**
 * Reads {@code tokenizer.json} and builds a {@link Tokenizer}. Strict by design: every field that
 * could change the ids is either implemented or rejected with a one-line message naming the field;
 * nothing is silently ignored. Fields that only affect character offsets ({@code trim_offsets}) or
 * that the ByteLevel decoder does not read are accepted.
 */
final class TokenizerJsonLoader {
    static final String FILE_NAME = "tokenizer.json";
    /** The regex the ByteLevel pre-tokenizer applies when {@code use_regex} is true (GPT-2's). */
    static final String BYTE_LEVEL_REGEX = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

    private static final ObjectMapper MAPPER = new ObjectMapper();

    private final String file;
    /** Streamed model.vocab and model.merges; null when the file has none. */
    private Map<String, Integer> vocab;
    private List<String> mergeLeft;
    private List<String> mergeRight;

    private TokenizerJsonLoader(String file) {
        this.file = file;
    }

    static Tokenizer load(Path fileOrDirectory) {
        Path path = Files.isDirectory(fileOrDirectory) ? fileOrDirectory.resolve(FILE_NAME) : fileOrDirectory;
        if (!Files.isRegularFile(path)) {
            throw new QlabException(path + ": tokenizer file not found");
        }
        TokenizerJsonLoader loader = new TokenizerJsonLoader(path.toString());
        ObjectNode root;
        try (JsonParser parser = MAPPER.getFactory().createParser(path.toFile())) {
            root = loader.parse(parser);
        } catch (JsonProcessingException e) {
            JsonLocation at = e.getLocation();
            String where = at == null ? "" : " at line " + at.getLineNr() + ", column " + at.getColumnNr();
            throw new QlabException(path + ": malformed JSON" + where + ": " + oneLine(e.getOriginalMessage()), e);
        } catch (IOException e) {
            throw new QlabException(path + ": cannot read: " + oneLine(e.getMessage()), e);
        }
        return loader.build(root);
    }

    /**
     * Reads the file as a tree, except {@code model.vocab} and {@code model.merges} (hundreds of
     * thousands of entries), which are streamed straight into their final form: a tree of them
     * dominated load time.
     */
    private ObjectNode parse(JsonParser parser) throws IOException {
        if (parser.nextToken() != JsonToken.START_OBJECT) {
            throw new QlabException(file + ": malformed JSON: expected an object at the top level");
        }
        ObjectNode root = MAPPER.createObjectNode();
        while (parser.nextToken() == JsonToken.FIELD_NAME) {
            String name = parser.currentName();
            JsonToken value = parser.nextToken();
            if (name.equals("model") && value == JsonToken.START_OBJECT) {
                ObjectNode model = root.putObject("model");
                while (parser.nextToken() == JsonToken.FIELD_NAME) {
                    String field = parser.currentName();
                    parser.nextToken();
                    switch (field) {
                        case "vocab" -> {
                            vocab = streamVocab(parser);
                            model.putObject("vocab");
                        }
                        case "merges" -> {
                            streamMerges(parser);
                            model.putArray("merges");
                        }
                        default -> model.set(field, parser.readValueAsTree());
                    }
                }
            } else {
                JsonNode tree = parser.readValueAsTree();
                root.set(name, tree == null ? MAPPER.nullNode() : tree);
            }
        }
        if (parser.currentToken() != JsonToken.END_OBJECT || parser.nextToken() != null) {
            throw new QlabException(file + ": malformed JSON at line " + parser.currentLocation().getLineNr()
                    + ": unexpected content after the top-level object");
        }
        return root;
    }

    private Map<String, Integer> streamVocab(JsonParser parser) throws IOException {
        if (parser.currentToken() != JsonToken.START_OBJECT) {
            throw error("model.vocab", "must be an object");
        }
        Map<String, Integer> out = new HashMap<>(1 << 18);
        while (parser.nextToken() == JsonToken.FIELD_NAME) {
            String token = parser.currentName();
            JsonToken v = parser.nextToken();
            if (v != JsonToken.VALUE_NUMBER_INT || parser.getNumberType() != JsonParser.NumberType.INT
                    || parser.getIntValue() < 0) {
                throw error("model.vocab", "entry " + showString(token) + " has id " + parser.getText()
                        + ", expected a non-negative integer");
            }
            out.put(token, parser.getIntValue());
        }
        return out;
    }

    private void streamMerges(JsonParser parser) throws IOException {
        if (parser.currentToken() != JsonToken.START_ARRAY) {
            throw error("model.merges", "must be an array");
        }
        mergeLeft = new ArrayList<>(1 << 18);
        mergeRight = new ArrayList<>(1 << 18);
        JsonToken t;
        while ((t = parser.nextToken()) != JsonToken.END_ARRAY) {
            int index = mergeLeft.size();
            if (t == JsonToken.VALUE_STRING) {
                // Old format "a b": exactly one space, as the reference requires.
                String line = parser.getText();
                int space = line.indexOf(' ');
                if (space < 0 || line.indexOf(' ', space + 1) >= 0) {
                    throw error("model.merges[" + index + "]", "is " + showString(line)
                            + ", expected two symbols separated by one space");
                }
                mergeLeft.add(line.substring(0, space));
                mergeRight.add(line.substring(space + 1));
            } else if (t == JsonToken.START_ARRAY) {
                JsonNode pair = parser.readValueAsTree();
                if (pair.size() != 2 || !pair.get(0).isTextual() || !pair.get(1).isTextual()) {
                    throw error("model.merges[" + index + "]", "is " + show(pair) + ", expected [\"a\", \"b\"] or \"a b\"");
                }
                mergeLeft.add(pair.get(0).asText());
                mergeRight.add(pair.get(1).asText());
            } else {
                throw error("model.merges[" + index + "]", "is " + parser.getText() + ", expected [\"a\", \"b\"] or \"a b\"");
            }
        }
    }

    private static String oneLine(String s) {
        return s == null ? "" : s.replaceAll("\\s*\\R\\s*", " ").trim();
    }

    // ---------------------------------------------------------------- errors and field access

    private QlabException error(String field, String problem) {
        return new QlabException(file + ": field \"" + field + "\" " + problem);
    }

    private static String show(JsonNode v) {
        return v == null ? "missing" : v.toString();
    }

    private void allowOnly(JsonNode obj, String path, Set<String> known) {
        Iterator<String> names = obj.fieldNames();
        while (names.hasNext()) {
            String name = names.next();
            if (!known.contains(name)) {
                throw error(join(path, name), "is not supported by this tokenizer");
            }
        }
    }

    private static String join(String path, String name) {
        return path.isEmpty() ? name : path + "." + name;
    }

    private JsonNode object(JsonNode parent, String name, String path) {
        JsonNode v = parent.get(name);
        if (v == null || !v.isObject()) {
            throw error(join(path, name), v == null ? "is missing" : "must be an object, is " + show(v));
        }
        return v;
    }

    private String text(JsonNode parent, String name, String path) {
        JsonNode v = parent.get(name);
        if (v == null || !v.isTextual()) {
            throw error(join(path, name), v == null ? "is missing" : "must be a string, is " + show(v));
        }
        return v.asText();
    }

    private String type(JsonNode obj, String path) {
        return text(obj, "type", path);
    }

    /** A boolean field that must have the value this implementation supports (absent = default). */
    private void requireFlag(JsonNode parent, String name, String path, boolean supported) {
        JsonNode v = parent.get(name);
        if (v == null || v.isNull()) {
            return;
        }
        if (!v.isBoolean()) {
            throw error(join(path, name), "must be a boolean, is " + show(v));
        }
        if (v.asBoolean() != supported) {
            throw error(join(path, name), "is " + v.asBoolean() + ", only " + supported + " is supported");
        }
    }

    private boolean flag(JsonNode parent, String name, String path, boolean dflt) {
        JsonNode v = parent.get(name);
        if (v == null || v.isNull()) {
            return dflt;
        }
        if (!v.isBoolean()) {
            throw error(join(path, name), "must be a boolean, is " + show(v));
        }
        return v.asBoolean();
    }

    /** A field that must be null, absent, or one of the given harmless string values. */
    private void requireNullOr(JsonNode parent, String name, String path, String... allowed) {
        JsonNode v = parent.get(name);
        if (v == null || v.isNull()) {
            return;
        }
        for (String a : allowed) {
            if (v.isTextual() && v.asText().equals(a)) {
                return;
            }
        }
        throw error(join(path, name), "is " + show(v) + ", which is not supported"
                + (allowed.length > 0 ? " (only null or \"" + String.join("\", \"", allowed) + "\")" : " (only null)"));
    }

    // ---------------------------------------------------------------- build

    private Tokenizer build(ObjectNode root) {
        allowOnly(root, "", Set.of("version", "truncation", "padding", "added_tokens", "normalizer",
                "pre_tokenizer", "post_processor", "decoder", "model"));
        requireNullOr(root, "truncation", "");
        requireNullOr(root, "padding", "");

        JsonNode model = object(root, "model", "");
        String modelType = type(model, "model");
        if (!modelType.equals("BPE")) {
            throw error("model.type", "is \"" + modelType + "\", only \"BPE\" is supported");
        }
        allowOnly(model, "model", Set.of("type", "dropout", "unk_token", "continuing_subword_prefix",
                "end_of_word_suffix", "fuse_unk", "byte_fallback", "ignore_merges", "vocab", "merges"));
        JsonNode dropout = model.get("dropout");
        if (dropout != null && !dropout.isNull()) {
            throw error("model.dropout", "is " + show(dropout) + ", only null is supported");
        }
        requireNullOr(model, "continuing_subword_prefix", "model", "");
        requireNullOr(model, "end_of_word_suffix", "model", "");
        requireFlag(model, "byte_fallback", "model", false);
        boolean ignoreMerges = flag(model, "ignore_merges", "model", false);
        // unk_token and fuse_unk only act on characters missing from the vocabulary; a byte-level
        // vocabulary has all 256 byte symbols (checked below), so they can never act.

        if (vocab == null) {
            throw error("model.vocab", "is missing");
        }
        int[] byteSymbol = byteSymbols(vocab, file, "model.vocab");
        if (mergeLeft == null) {
            throw error("model.merges", "is missing");
        }
        MergeTable merges = resolveMerges(vocab, mergeLeft, mergeRight, file, "model.merges", "model.vocab");

        List<UnicodeNormalization> normalizations = new ArrayList<>();
        readNormalizer(root.get("normalizer"), "normalizer", normalizations);
        List<PieceSplitter> preTokenizers = readPreTokenizers(root.get("pre_tokenizer"));
        readPostProcessor(root.get("post_processor"));
        readDecoder(root.get("decoder"));

        // Added tokens; their ids may extend past the vocabulary.
        int maxId = -1;
        for (int id : vocab.values()) {
            maxId = Math.max(maxId, id);
        }
        JsonNode added = root.get("added_tokens");
        List<String> rawContents = new ArrayList<>();
        List<Integer> rawIds = new ArrayList<>();
        List<String> normContents = new ArrayList<>();
        List<Integer> normIds = new ArrayList<>();
        Map<Integer, String> addedById = new HashMap<>();
        Set<String> specialContents = new HashSet<>();
        if (added != null && !added.isNull()) {
            if (!added.isArray()) {
                throw error("added_tokens", "must be an array, is " + show(added));
            }
            for (int i = 0; i < added.size(); i++) {
                String path = "added_tokens[" + i + "]";
                JsonNode t = added.get(i);
                if (!t.isObject()) {
                    throw error(path, "must be an object, is " + show(t));
                }
                allowOnly(t, path, Set.of("id", "content", "single_word", "lstrip", "rstrip", "normalized", "special"));
                JsonNode idNode = t.get("id");
                if (idNode == null || !idNode.canConvertToInt() || !idNode.isIntegralNumber() || idNode.asInt() < 0) {
                    throw error(path + ".id", idNode == null ? "is missing" : "must be a non-negative integer, is " + show(idNode));
                }
                int id = idNode.asInt();
                String content = text(t, "content", path);
                if (content.isEmpty()) {
                    throw error(path + ".content", "is empty");
                }
                requireFlag(t, "single_word", path, false);
                requireFlag(t, "lstrip", path, false);
                requireFlag(t, "rstrip", path, false);
                boolean isSpecial = flag(t, "special", path, false);
                // The reference's default for a missing "normalized" is the opposite of "special".
                boolean normalized = flag(t, "normalized", path, !isSpecial);
                if (normalized) {
                    String n = content;
                    for (UnicodeNormalization form : normalizations) {
                        n = form.apply(n);
                    }
                    normContents.add(n);
                    normIds.add(id);
                } else {
                    rawContents.add(content);
                    rawIds.add(id);
                }
                addedById.put(id, content);
                if (isSpecial) {
                    specialContents.add(content);
                }
                maxId = Math.max(maxId, id);
            }
        }

        String[] tokenTexts = new String[maxId + 1];
        for (Map.Entry<String, Integer> e : vocab.entrySet()) {
            tokenTexts[e.getValue()] = e.getKey();
        }
        Map<String, Integer> tokenIds = new HashMap<>(vocab);
        for (Map.Entry<Integer, String> e : addedById.entrySet()) {
            tokenTexts[e.getKey()] = e.getValue();
            tokenIds.put(e.getValue(), e.getKey());
        }
        // The reference decides "special" by the token's text, so a vocabulary entry spelled like
        // a special added token is skipped too.
        boolean[] special = new boolean[maxId + 1];
        for (int id = 0; id <= maxId; id++) {
            special[id] = tokenTexts[id] != null && specialContents.contains(tokenTexts[id]);
        }
        return new Tokenizer(new AddedTokenMatcher(rawContents, rawIds), new AddedTokenMatcher(normContents, normIds),
                normalizations, preTokenizers, new BpeModel(vocab, byteSymbol, merges, ignoreMerges),
                tokenIds, tokenTexts, special);
    }

    static String showString(String s) {
        return new com.fasterxml.jackson.databind.node.TextNode(s).toString();
    }

    /** The id of each byte's byte-level symbol; a vocabulary lacking one is refused. */
    static int[] byteSymbols(Map<String, Integer> vocab, String file, String field) {
        int[] byteSymbol = new int[256];
        for (int b = 0; b < 256; b++) {
            Integer id = vocab.get(String.valueOf(ByteLevelAlphabet.charOf(b)));
            if (id == null) {
                throw new QlabException(file + ": field \"" + field + "\" lacks the byte-level symbol for byte " + b
                        + " (\"" + ByteLevelAlphabet.charOf(b) + "\"); only complete byte-level vocabularies are supported");
            }
            byteSymbol[b] = id;
        }
        return byteSymbol;
    }

    /** The merge rules by rank; each side and their concatenation must be in the vocabulary. */
    static MergeTable resolveMerges(Map<String, Integer> vocab, List<String> mergeLeft, List<String> mergeRight,
            String file, String field, String vocabField) {
        MergeTable table = new MergeTable(mergeLeft.size());
        for (int rank = 0; rank < mergeLeft.size(); rank++) {
            String left = mergeLeft.get(rank);
            String right = mergeRight.get(rank);
            Integer l = vocab.get(left);
            Integer r = vocab.get(right);
            Integer merged = vocab.get(left + right);
            if (l == null || r == null || merged == null) {
                String missing = l == null ? left : r == null ? right : left + right;
                throw new QlabException(file + ": field \"" + field + "[" + rank + "]\" uses " + showString(missing)
                        + ", which is not in " + vocabField);
            }
            table.put(l, r, rank, merged);
        }
        return table;
    }

    private void readNormalizer(JsonNode n, String path, List<UnicodeNormalization> out) {
        if (n == null || n.isNull()) {
            return;
        }
        if (!n.isObject()) {
            throw error(path, "must be an object or null, is " + show(n));
        }
        String type = type(n, path);
        switch (type) {
            case "NFC", "NFD", "NFKC", "NFKD" -> {
                allowOnly(n, path, Set.of("type"));
                out.add(UnicodeNormalization.valueOf(type));
            }
            case "Sequence" -> {
                allowOnly(n, path, Set.of("type", "normalizers"));
                JsonNode list = n.get("normalizers");
                if (list == null || !list.isArray()) {
                    throw error(path + ".normalizers", list == null ? "is missing" : "must be an array");
                }
                for (int i = 0; i < list.size(); i++) {
                    readNormalizer(list.get(i), path + ".normalizers[" + i + "]", out);
                }
            }
            default -> throw error(path + ".type", "is \"" + type + "\", only NFC, NFD, NFKC, NFKD and Sequence are supported");
        }
    }

    private List<PieceSplitter> readPreTokenizers(JsonNode p) {
        if (p == null || p.isNull()) {
            throw error("pre_tokenizer", "is missing; only byte-level tokenizers (with a ByteLevel pre-tokenizer) are supported");
        }
        List<JsonNode> steps = new ArrayList<>();
        List<String> paths = new ArrayList<>();
        if (!p.isObject()) {
            throw error("pre_tokenizer", "must be an object, is " + show(p));
        }
        if (type(p, "pre_tokenizer").equals("Sequence")) {
            allowOnly(p, "pre_tokenizer", Set.of("type", "pretokenizers"));
            JsonNode list = p.get("pretokenizers");
            if (list == null || !list.isArray()) {
                throw error("pre_tokenizer.pretokenizers", list == null ? "is missing" : "must be an array");
            }
            for (int i = 0; i < list.size(); i++) {
                steps.add(list.get(i));
                paths.add("pre_tokenizer.pretokenizers[" + i + "]");
            }
        } else {
            steps.add(p);
            paths.add("pre_tokenizer");
        }
        List<PieceSplitter> splitters = new ArrayList<>();
        for (int i = 0; i < steps.size(); i++) {
            JsonNode step = steps.get(i);
            String path = paths.get(i);
            if (!step.isObject()) {
                throw error(path, "must be an object, is " + show(step));
            }
            String type = type(step, path);
            boolean last = i == steps.size() - 1;
            switch (type) {
                case "Split" -> {
                    if (last) {
                        throw error(path, "is a Split after which no ByteLevel step follows; only byte-level tokenizers are supported");
                    }
                    splitters.add(readSplit(step, path));
                }
                case "ByteLevel" -> {
                    if (!last) {
                        throw error(path, "is a ByteLevel step that is not the last pre-tokenizer, which is not supported");
                    }
                    allowOnly(step, path, Set.of("type", "add_prefix_space", "trim_offsets", "use_regex"));
                    requireFlag(step, "add_prefix_space", path, false);
                    flag(step, "trim_offsets", path, true); // offsets only: no effect on ids
                    if (flag(step, "use_regex", path, true)) {
                        splitters.add(compile(BYTE_LEVEL_REGEX, false, path + ".use_regex"));
                    }
                }
                default -> throw error(path + ".type", "is \"" + type + "\", only Sequence, Split and ByteLevel are supported");
            }
        }
        if (steps.isEmpty()) {
            throw error("pre_tokenizer.pretokenizers", "is empty; a ByteLevel step is required");
        }
        return splitters;
    }

    private PieceSplitter readSplit(JsonNode step, String path) {
        allowOnly(step, path, Set.of("type", "pattern", "behavior", "invert"));
        requireFlag(step, "invert", path, false);
        String behavior = text(step, "behavior", path);
        boolean removed;
        switch (behavior) {
            case "Isolated" -> removed = false;
            case "Removed" -> removed = true;
            default -> throw error(path + ".behavior", "is \"" + behavior + "\", only \"Isolated\" and \"Removed\" are supported");
        }
        JsonNode pattern = object(step, "pattern", path);
        if (pattern.size() != 1) {
            throw error(path + ".pattern", "must have exactly one of \"Regex\" or \"String\", is " + show(pattern));
        }
        if (pattern.has("String")) {
            return new TranslatedRegexSplitter(TranslatedRegexSplitter.literal(text(pattern, "String", path + ".pattern")), removed);
        }
        String regex = text(pattern, "Regex", path + ".pattern");
        if (!removed) {
            Qwen2PatternScanner scanner = Qwen2PatternScanner.forPattern(regex);
            if (scanner != null) {
                return scanner;
            }
        }
        return compile(regex, removed, path + ".pattern.Regex");
    }

    private PieceSplitter compile(String regex, boolean removed, String field) {
        try {
            return new TranslatedRegexSplitter(TranslatedRegexSplitter.translate(regex), removed);
        } catch (TranslatedRegexSplitter.UnsupportedPatternException e) {
            throw error(field, "cannot be handled exactly: " + e.getMessage());
        }
    }

    private void readPostProcessor(JsonNode p) {
        if (p == null || p.isNull()) {
            return;
        }
        String type = type(p, "post_processor");
        if (!type.equals("ByteLevel")) {
            throw error("post_processor.type", "is \"" + type + "\", only ByteLevel (or null) is supported");
        }
        // The ByteLevel post-processor only trims offsets; it adds no tokens.
        allowOnly(p, "post_processor", Set.of("type", "add_prefix_space", "trim_offsets", "use_regex"));
    }

    private void readDecoder(JsonNode d) {
        if (d == null || d.isNull()) {
            throw error("decoder", "is missing; only the ByteLevel decoder is supported");
        }
        String type = type(d, "decoder");
        if (!type.equals("ByteLevel")) {
            throw error("decoder.type", "is \"" + type + "\", only ByteLevel is supported");
        }
        // The ByteLevel decoder reads none of its options.
        allowOnly(d, "decoder", Set.of("type", "add_prefix_space", "trim_offsets", "use_regex"));
    }
}
