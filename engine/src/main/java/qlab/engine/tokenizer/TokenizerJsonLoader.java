package qlab.engine.tokenizer;

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
import qlab.engine.util.JsonErrors;

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
            throw new QlabException(path + ": malformed JSON" + JsonErrors.where(e) + ": " + JsonErrors.why(e), e);
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
        // The reference treats a dropout of 0 as none.
        if (dropout != null && !dropout.isNull() && !(dropout.isNumber() && dropout.asDouble() == 0.0)) {
            throw error("model.dropout", "is " + show(dropout) + ", only null or 0 is supported");
        }
        requireNullOr(model, "continuing_subword_prefix", "model", "");
        requireNullOr(model, "end_of_word_suffix", "model", "");
        boolean byteFallback = flag(model, "byte_fallback", "model", false);
        boolean fuseUnk = flag(model, "fuse_unk", "model", false);
        boolean ignoreMerges = flag(model, "ignore_merges", "model", false);
        JsonNode unkNode = model.get("unk_token");
        if (unkNode != null && !unkNode.isNull() && !unkNode.isTextual()) {
            throw error("model.unk_token", "must be a string or null, is " + show(unkNode));
        }
        String unkToken = unkNode == null || unkNode.isNull() ? null : unkNode.asText();

        if (vocab == null) {
            throw error("model.vocab", "is missing");
        }
        List<TextNormalizer> normalizations = new ArrayList<>();
        readNormalizer(root.get("normalizer"), "normalizer", normalizations);
        List<PieceSplitter> preTokenizers = new ArrayList<>();
        boolean byteLevel = readPreTokenizers(root.get("pre_tokenizer"), preTokenizers);
        int[][] specialAround = {new int[0], new int[0]};
        readPostProcessor(root.get("post_processor"), "post_processor", specialAround);
        DecoderChain decoderChain = readDecoder(root.get("decoder"), byteLevel);

        BpeModel bpe;
        if (byteLevel) {
            // unk_token, fuse_unk and byte_fallback only act on characters missing from the vocabulary;
            // a byte-level vocabulary has all 256 byte symbols (checked here), so they can never act.
            int[] byteSymbol = byteSymbols(vocab, file, "model.vocab");
            bpe = new BpeModel(vocab, byteSymbol, merges(), ignoreMerges);
        } else {
            int[] byteToken = null;
            boolean allBytes = false;
            if (byteFallback) {
                byteToken = new int[256];
                allBytes = true;
                for (int b = 0; b < 256; b++) {
                    Integer id = vocab.get(CharSymbols.byteTokenText(b));
                    byteToken[b] = id == null ? -1 : id;
                    allBytes &= id != null;
                }
            }
            int unkId = -1;
            if (unkToken != null) {
                Integer id = vocab.get(unkToken);
                // The reference fails when it needs the unknown token and the vocabulary lacks it;
                // with every byte token present it never needs it.
                if (id == null && !allBytes) {
                    throw error("model.unk_token", "is " + showString(unkToken) + ", which is not in model.vocab");
                }
                unkId = id == null ? -1 : id;
            }
            bpe = new BpeModel(vocab, new CharSymbols(vocab, byteToken, unkId, fuseUnk), merges(), ignoreMerges);
        }

        // Added tokens; their ids may extend past the vocabulary.
        int maxId = -1;
        for (int id : vocab.values()) {
            maxId = Math.max(maxId, id);
        }
        JsonNode added = root.get("added_tokens");
        List<String> rawContents = new ArrayList<>();
        List<Integer> rawIds = new ArrayList<>();
        List<Boolean> rawLstrip = new ArrayList<>();
        List<Boolean> rawRstrip = new ArrayList<>();
        List<String> normContents = new ArrayList<>();
        List<Integer> normIds = new ArrayList<>();
        List<Boolean> normLstrip = new ArrayList<>();
        List<Boolean> normRstrip = new ArrayList<>();
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
                boolean lstrip = flag(t, "lstrip", path, false);
                boolean rstrip = flag(t, "rstrip", path, false);
                boolean isSpecial = flag(t, "special", path, false);
                // The reference's default for a missing "normalized" is the opposite of "special".
                boolean normalized = flag(t, "normalized", path, !isSpecial);
                if (normalized) {
                    String n = content;
                    for (TextNormalizer form : normalizations) {
                        n = form.apply(n);
                    }
                    normContents.add(n);
                    normIds.add(id);
                    normLstrip.add(lstrip);
                    normRstrip.add(rstrip);
                } else {
                    rawContents.add(content);
                    rawIds.add(id);
                    rawLstrip.add(lstrip);
                    rawRstrip.add(rstrip);
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
        return new Tokenizer(new AddedTokenMatcher(rawContents, rawIds, rawLstrip, rawRstrip),
                new AddedTokenMatcher(normContents, normIds, normLstrip, normRstrip),
                normalizations, preTokenizers, bpe, tokenIds, tokenTexts, special, decoderChain,
                specialAround[0], specialAround[1]);
    }

    private MergeTable merges() {
        if (mergeLeft == null) {
            throw error("model.merges", "is missing");
        }
        return resolveMerges(vocab, mergeLeft, mergeRight, file, "model.merges", "model.vocab");
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

    /** The array of a {@code Sequence} step (its only field besides {@code type}). */
    private JsonNode sequenceItems(JsonNode sequence, String path, String listName) {
        allowOnly(sequence, path, Set.of("type", listName));
        JsonNode list = sequence.get(listName);
        if (list == null || !list.isArray()) {
            throw error(path + "." + listName, list == null ? "is missing" : "must be an array");
        }
        return list;
    }

    // ---------------------------------------------------------------- normalizer

    private void readNormalizer(JsonNode n, String path, List<TextNormalizer> out) {
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
                JsonNode list = sequenceItems(n, path, "normalizers");
                for (int i = 0; i < list.size(); i++) {
                    readNormalizer(list.get(i), path + ".normalizers[" + i + "]", out);
                }
            }
            case "Prepend" -> {
                allowOnly(n, path, Set.of("type", "prepend"));
                out.add(new TextNormalizer.Prepend(text(n, "prepend", path)));
            }
            case "Replace" -> {
                allowOnly(n, path, Set.of("type", "pattern", "content"));
                String content = text(n, "content", path);
                Object pattern = replacePattern(n, path, content);
                out.add(pattern instanceof String literal ? new TextNormalizer.ReplaceLiteral(literal, content)
                        : new TextNormalizer.ReplaceRegex((java.util.regex.Pattern) pattern, content));
            }
            default -> throw error(path + ".type", "is \"" + type
                    + "\", only NFC, NFD, NFKC, NFKD, Prepend, Replace and Sequence are supported");
        }
    }

    /** The pattern of a Replace step: a non-empty literal String, or a compiled regex that cannot match nothing. */
    private Object replacePattern(JsonNode step, String path, String content) {
        JsonNode pattern = object(step, "pattern", path);
        if (pattern.size() != 1 || !(pattern.has("String") || pattern.has("Regex"))) {
            throw error(path + ".pattern", "must have exactly one of \"Regex\" or \"String\", is " + show(pattern));
        }
        if (pattern.has("String")) {
            String literal = text(pattern, "String", path + ".pattern");
            if (literal.isEmpty()) {
                throw error(path + ".pattern.String", "is empty, which is not supported");
            }
            return literal;
        }
        String field = path + ".pattern.Regex";
        String regex = text(pattern, "Regex", path + ".pattern");
        // Reference versions differ on "$1"-style references in the content of a regex Replace.
        if (content.indexOf('$') >= 0) {
            throw error(path + ".content", "contains '$' with a Regex pattern, which is not supported");
        }
        try {
            java.util.regex.Pattern compiled = TranslatedRegexSplitter.translate(regex);
            if (compiled.matcher("").matches()) {
                throw error(field, "can match the empty string, which is not supported");
            }
            return compiled;
        } catch (TranslatedRegexSplitter.UnsupportedPatternException e) {
            throw error(field, "cannot be handled exactly: " + e.getMessage());
        }
    }

    // ---------------------------------------------------------------- pre-tokenizer

    /** Adds the pre-tokenizer's steps to {@code out}; returns whether the tokenizer is byte-level. */
    private boolean readPreTokenizers(JsonNode p, List<PieceSplitter> out) {
        if (p == null || p.isNull()) {
            return false;
        }
        List<JsonNode> steps = new ArrayList<>();
        List<String> paths = new ArrayList<>();
        flattenPreTokenizers(p, "pre_tokenizer", steps, paths);
        boolean byteLevel = false;
        for (int i = 0; i < steps.size(); i++) {
            JsonNode step = steps.get(i);
            String path = paths.get(i);
            String type = type(step, path);
            boolean last = i == steps.size() - 1;
            switch (type) {
                case "Split" -> out.add(readSplit(step, path));
                case "ByteLevel" -> {
                    if (!last) {
                        throw error(path, "is a ByteLevel step that is not the last pre-tokenizer, which is not supported");
                    }
                    allowOnly(step, path, Set.of("type", "add_prefix_space", "trim_offsets", "use_regex"));
                    requireFlag(step, "add_prefix_space", path, false);
                    flag(step, "trim_offsets", path, true); // offsets only: no effect on ids
                    if (flag(step, "use_regex", path, true)) {
                        out.add(compile(BYTE_LEVEL_REGEX, SplitBehavior.ISOLATED, false, path + ".use_regex"));
                    }
                    byteLevel = true;
                }
                case "Metaspace" -> {
                    allowOnly(step, path, Set.of("type", "replacement", "prepend_scheme", "split", "add_prefix_space", "str_rep"));
                    out.add(new MetaspaceSplitter(replacementChar(step, path), prependScheme(step, path),
                            flag(step, "split", path, true)));
                }
                case "Digits" -> {
                    allowOnly(step, path, Set.of("type", "individual_digits"));
                    out.add(new DigitsSplitter(flag(step, "individual_digits", path, false)));
                }
                default -> throw error(path + ".type", "is \"" + type
                        + "\", only Sequence, Split, ByteLevel, Metaspace and Digits are supported");
            }
        }
        return byteLevel;
    }

    private void flattenPreTokenizers(JsonNode p, String path, List<JsonNode> steps, List<String> paths) {
        if (!p.isObject()) {
            throw error(path, "must be an object, is " + show(p));
        }
        if (!type(p, path).equals("Sequence")) {
            steps.add(p);
            paths.add(path);
            return;
        }
        JsonNode list = sequenceItems(p, path, "pretokenizers");
        for (int i = 0; i < list.size(); i++) {
            flattenPreTokenizers(list.get(i), path + ".pretokenizers[" + i + "]", steps, paths);
        }
    }

    /** A Metaspace {@code replacement}: one character (one code point). */
    private String replacementChar(JsonNode step, String path) {
        String r = text(step, "replacement", path);
        if (r.codePointCount(0, r.length()) != 1) {
            throw error(path + ".replacement", "must be one character, is " + showString(r));
        }
        if (step.has("str_rep") && !step.get("str_rep").isNull() && !r.equals(step.get("str_rep").asText())) {
            throw error(path + ".str_rep", "differs from \"replacement\", which is not supported");
        }
        return r;
    }

    /** {@code prepend_scheme} (default always), or the older {@code add_prefix_space} (false = never). */
    private MetaspaceSplitter.PrependScheme prependScheme(JsonNode step, String path) {
        JsonNode scheme = step.get("prepend_scheme");
        MetaspaceSplitter.PrependScheme result = MetaspaceSplitter.PrependScheme.ALWAYS;
        if (scheme != null && !scheme.isNull()) {
            result = switch (scheme.asText()) {
                case "always" -> MetaspaceSplitter.PrependScheme.ALWAYS;
                case "first" -> MetaspaceSplitter.PrependScheme.FIRST;
                case "never" -> MetaspaceSplitter.PrependScheme.NEVER;
                default -> throw error(path + ".prepend_scheme", "is " + show(scheme) + ", expected \"always\", \"first\" or \"never\"");
            };
        }
        JsonNode addPrefix = step.get("add_prefix_space");
        if (addPrefix != null && !addPrefix.isNull() && !flag(step, "add_prefix_space", path, true)) {
            if (scheme != null && !scheme.isNull() && result != MetaspaceSplitter.PrependScheme.NEVER) {
                throw error(path + ".add_prefix_space", "is false but prepend_scheme is " + show(scheme));
            }
            result = MetaspaceSplitter.PrependScheme.NEVER;
        }
        return result;
    }

    private PieceSplitter readSplit(JsonNode step, String path) {
        allowOnly(step, path, Set.of("type", "pattern", "behavior", "invert"));
        boolean invert = flag(step, "invert", path, false);
        String behaviorName = text(step, "behavior", path);
        SplitBehavior behavior = SplitBehavior.fromJson(behaviorName);
        if (behavior == null) {
            throw error(path + ".behavior", "is \"" + behaviorName
                    + "\", expected Removed, Isolated, MergedWithPrevious, MergedWithNext or Contiguous");
        }
        JsonNode pattern = object(step, "pattern", path);
        if (pattern.size() != 1 || !(pattern.has("String") || pattern.has("Regex"))) {
            throw error(path + ".pattern", "must have exactly one of \"Regex\" or \"String\", is " + show(pattern));
        }
        if (pattern.has("String")) {
            String literal = text(pattern, "String", path + ".pattern");
            if (literal.isEmpty()) {
                throw error(path + ".pattern.String", "is empty, which is not supported");
            }
            return new TranslatedRegexSplitter(TranslatedRegexSplitter.literal(literal), behavior, invert);
        }
        String regex = text(pattern, "Regex", path + ".pattern");
        if (behavior == SplitBehavior.ISOLATED && !invert) {
            Qwen2PatternScanner scanner = Qwen2PatternScanner.forPattern(regex);
            if (scanner != null) {
                return scanner;
            }
        }
        return compile(regex, behavior, invert, path + ".pattern.Regex");
    }

    private PieceSplitter compile(String regex, SplitBehavior behavior, boolean invert, String field) {
        try {
            return new TranslatedRegexSplitter(TranslatedRegexSplitter.translate(regex), behavior, invert);
        } catch (TranslatedRegexSplitter.UnsupportedPatternException e) {
            throw error(field, "cannot be handled exactly: " + e.getMessage());
        }
    }

    // ---------------------------------------------------------------- post-processor

    /**
     * Reads the post-processor, which only acts when special tokens are added ({@code add_special_tokens=True}):
     * {@code TemplateProcessing}'s single-sequence template gives the ids put before and after the text
     * ({@code out[0]} and {@code out[1]}); {@code ByteLevel} adds none; anything else is refused.
     */
    private void readPostProcessor(JsonNode p, String path, int[][] out) {
        if (p == null || p.isNull()) {
            return;
        }
        String type = type(p, path);
        switch (type) {
            case "ByteLevel" -> allowOnly(p, path, Set.of("type", "add_prefix_space", "trim_offsets", "use_regex"));
            case "TemplateProcessing" -> readTemplate(p, path, out);
            case "Sequence" -> {
                JsonNode list = sequenceItems(p, path, "processors");
                for (int i = 0; i < list.size(); i++) {
                    readPostProcessor(list.get(i), path + ".processors[" + i + "]", out);
                }
            }
            default -> throw error(path + ".type", "is \"" + type
                    + "\", only ByteLevel, TemplateProcessing and Sequence (or null) are supported");
        }
    }

    /** The {@code single} template: special tokens around one {@code Sequence} "A". */
    private void readTemplate(JsonNode p, String path, int[][] out) {
        allowOnly(p, path, Set.of("type", "single", "pair", "special_tokens"));
        if (out[0].length > 0 || out[1].length > 0) {
            throw error(path, "is a second TemplateProcessing that adds tokens, which is not supported");
        }
        JsonNode single = p.get("single");
        if (single == null || !single.isArray()) {
            throw error(path + ".single", single == null ? "is missing" : "must be an array");
        }
        JsonNode specials = p.get("special_tokens");
        List<Integer> before = new ArrayList<>();
        List<Integer> after = new ArrayList<>();
        boolean seenSequence = false;
        for (int i = 0; i < single.size(); i++) {
            String piecePath = path + ".single[" + i + "]";
            JsonNode piece = single.get(i);
            if (piece.has("Sequence") && piece.size() == 1) {
                String id = text(object(piece, "Sequence", piecePath), "id", piecePath + ".Sequence");
                if (!id.equals("A") || seenSequence) {
                    throw error(piecePath + ".Sequence.id", "is \"" + id + "\", only one sequence \"A\" is supported");
                }
                seenSequence = true;
            } else if (piece.has("SpecialToken") && piece.size() == 1) {
                String name = text(object(piece, "SpecialToken", piecePath), "id", piecePath + ".SpecialToken");
                JsonNode ids = specials == null ? null : specials.path(name).get("ids");
                if (ids == null || !ids.isArray()) {
                    throw error(path + ".special_tokens", "has no ids for \"" + name + "\"");
                }
                for (JsonNode id : ids) {
                    if (!id.canConvertToInt() || id.asInt() < 0) {
                        throw error(path + ".special_tokens." + name + ".ids", "must hold non-negative integers");
                    }
                    (seenSequence ? after : before).add(id.asInt());
                }
            } else {
                throw error(piecePath, "must be {\"SpecialToken\": ...} or {\"Sequence\": ...}, is " + show(piece));
            }
        }
        if (!seenSequence) {
            throw error(path + ".single", "has no Sequence \"A\"");
        }
        out[0] = before.stream().mapToInt(Integer::intValue).toArray();
        out[1] = after.stream().mapToInt(Integer::intValue).toArray();
    }

    // ---------------------------------------------------------------- decoder

    /** The decoder chain, or null for a byte-level tokenizer (whose decoder must be ByteLevel). */
    private DecoderChain readDecoder(JsonNode d, boolean byteLevel) {
        if (byteLevel) {
            if (d == null || d.isNull()) {
                throw error("decoder", "is missing; a ByteLevel pre-tokenizer needs the ByteLevel decoder");
            }
            String type = type(d, "decoder");
            if (!type.equals("ByteLevel")) {
                throw error("decoder.type", "is \"" + type + "\"; a ByteLevel pre-tokenizer needs the ByteLevel decoder");
            }
            // The ByteLevel decoder reads none of its options.
            allowOnly(d, "decoder", Set.of("type", "add_prefix_space", "trim_offsets", "use_regex"));
            return null;
        }
        if (d == null || d.isNull()) {
            return new DecoderChain(null);
        }
        List<DecoderChain.Step> steps = new ArrayList<>();
        readDecoderSteps(d, "decoder", steps);
        return new DecoderChain(steps);
    }

    private void readDecoderSteps(JsonNode d, String path, List<DecoderChain.Step> out) {
        if (!d.isObject()) {
            throw error(path, "must be an object, is " + show(d));
        }
        String type = type(d, path);
        switch (type) {
            case "Sequence" -> {
                JsonNode list = sequenceItems(d, path, "decoders");
                for (int i = 0; i < list.size(); i++) {
                    readDecoderSteps(list.get(i), path + ".decoders[" + i + "]", out);
                }
            }
            case "Replace" -> {
                allowOnly(d, path, Set.of("type", "pattern", "content"));
                String content = text(d, "content", path);
                Object pattern = replacePattern(d, path, content);
                out.add(pattern instanceof String literal ? new DecoderChain.ReplaceLiteral(literal, content)
                        : new DecoderChain.ReplaceRegex((java.util.regex.Pattern) pattern, content));
            }
            case "ByteFallback" -> {
                allowOnly(d, path, Set.of("type"));
                out.add(new DecoderChain.ByteFallback());
            }
            case "Fuse" -> {
                allowOnly(d, path, Set.of("type"));
                out.add(new DecoderChain.Fuse());
            }
            case "Strip" -> {
                allowOnly(d, path, Set.of("type", "content", "start", "stop"));
                String content = text(d, "content", path);
                if (content.codePointCount(0, content.length()) != 1) {
                    throw error(path + ".content", "must be one character, is " + showString(content));
                }
                out.add(new DecoderChain.Strip(content.codePointAt(0), count(d, "start", path), count(d, "stop", path)));
            }
            case "Metaspace" -> {
                allowOnly(d, path, Set.of("type", "replacement", "prepend_scheme", "split", "add_prefix_space", "str_rep"));
                flag(d, "split", path, true); // decoding does not split
                out.add(new DecoderChain.Metaspace(replacementChar(d, path),
                        prependScheme(d, path) != MetaspaceSplitter.PrependScheme.NEVER));
            }
            case "ByteLevel" -> throw error(path + ".type", "is \"ByteLevel\", which needs a ByteLevel pre-tokenizer");
            default -> throw error(path + ".type", "is \"" + type
                    + "\", only ByteLevel, Replace, ByteFallback, Fuse, Strip, Metaspace and Sequence are supported");
        }
    }

    private int count(JsonNode parent, String name, String path) {
        JsonNode v = parent.get(name);
        if (v == null || !v.canConvertToInt() || !v.isIntegralNumber() || v.asInt() < 0) {
            throw error(join(path, name), v == null ? "is missing" : "must be a non-negative integer, is " + show(v));
        }
        return v.asInt();
    }
}
