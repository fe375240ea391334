package qlab.engine.gguf;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import qlab.engine.QlabException;
import qlab.engine.tokenizer.Tokenizer;

/**
 * The tokenizer of a GGUF file, from its {@code tokenizer.ggml.*} metadata, and the same metadata
 * made from a Hugging Face model directory (tokenizer.json, tokenizer_config.json, config.json) as
 * llama.cpp's converter writes it.
 */
public final class GgufTokenizer {

    public static final String MODEL = "tokenizer.ggml.model";
    public static final String PRE = "tokenizer.ggml.pre";
    public static final String TOKENS = "tokenizer.ggml.tokens";
    public static final String TOKEN_TYPE = "tokenizer.ggml.token_type";
    public static final String MERGES = "tokenizer.ggml.merges";
    public static final String SCORES = "tokenizer.ggml.scores";
    public static final String CHAT_TEMPLATE = "tokenizer.chat_template";

    private GgufTokenizer() {}

    /** Whether the file carries a tokenizer at all. */
    public static boolean present(GgufFile f) {
        return f.has(MODEL) && f.has(TOKENS);
    }

    public static Tokenizer read(GgufFile f) {
        return Tokenizer.fromGgml(f.source(), f.string(MODEL), f.strings(TOKENS),
                f.has(TOKEN_TYPE) ? f.ints(TOKEN_TYPE) : null,
                f.has(MERGES) ? f.strings(MERGES) : List.of(),
                f.has(PRE) ? f.string(PRE) : "default");
    }

    /** Every tokenizer key of a GGUF file ({@code tokenizer.*}), in file order. */
    public static Map<String, GgufValue> metadataOf(GgufFile f) {
        Map<String, GgufValue> m = new LinkedHashMap<>();
        f.metadata().forEach((k, v) -> {
            if (k.startsWith("tokenizer.")) {
                m.put(k, v);
            }
        });
        return m;
    }

    /**
     * The {@code tokenizer.*} metadata of a Hugging Face model directory, by the rules of llama.cpp's
     * converter for a byte-level BPE ({@code TextModel.get_vocab_base}, {@code _set_vocab_gpt2} and
     * gguf-py's {@code SpecialVocab}): tokens in id order, a {@code [PAD<id>]} placeholder (type
     * unused) at any id the tokenizer leaves free; added tokens that are special or look special
     * ({@code <|...|>}) as control tokens, other added tokens as user-defined; merges as "a b"; the
     * pre-tokenizer named by its split pattern; the special token ids of tokenizer_config.json, then
     * of config.json; add_*_token flags; and the chat template. The list ends at the highest id:
     * {@link #padTo} extends it to the embedding's rows.
     */
    public static Map<String, GgufValue> metadataOf(Path modelDir) {
        Path file = modelDir.resolve("tokenizer.json");
        JsonNode root = json(file);
        JsonNode vocab = root.path("model").path("vocab");
        if (!vocab.isObject()) {
            throw new QlabException(file + ": field \"model.vocab\" is missing or not an object");
        }
        java.util.TreeMap<Integer, String> byId = new java.util.TreeMap<>();
        Map<Integer, Integer> types = new java.util.HashMap<>();
        vocab.fields().forEachRemaining(e -> byId.put(e.getValue().asInt(), e.getKey()));
        Map<String, Integer> addedIds = new LinkedHashMap<>();
        for (JsonNode t : root.path("added_tokens")) {
            int id = t.path("id").asInt();
            String content = t.path("content").asText();
            addedIds.putIfAbsent(content, id);
            if (t.path("special").asBoolean(false) || looksSpecial(content)) {
                types.put(id, CONTROL);
            } else {
                // the converter pre-normalizes user-defined spaces (SentencePiece's U+2581)
                content = content.replace('\u2581', ' ');
                types.put(id, USER_DEFINED);
            }
            byId.put(id, content);
        }
        if (!byId.isEmpty() && byId.firstKey() < 0) {
            throw new QlabException(file + ": field \"model.vocab\" has a negative token id " + byId.firstKey());
        }
        int n = byId.isEmpty() ? 0 : byId.lastKey() + 1;
        List<String> tokens = new ArrayList<>(n);
        List<Long> tokenTypes = new ArrayList<>(n);
        for (int id = 0; id < n; id++) {
            String t = byId.get(id);
            tokens.add(t == null ? placeholder(id) : t);
            tokenTypes.add((long) (t == null ? UNUSED : types.getOrDefault(id, NORMAL)));
        }
        List<String> merges = new ArrayList<>();
        for (JsonNode m : root.path("model").path("merges")) {
            // pairs (transformers >= 4.45) may hold spaces: the converter writes them as U+0120, as byte-level BPE spells a space
            merges.add(m.isArray() ? m.get(0).asText().replace(' ', '\u0120') + " " + m.get(1).asText().replace(' ', '\u0120')
                    : m.asText());
        }
        Map<String, GgufValue> out = new LinkedHashMap<>();
        out.put(MODEL, GgufValue.string("gpt2"));
        out.put(PRE, GgufValue.string(preName(file, root)));
        out.put(TOKENS, GgufValue.array(GgufValueType.STRING, tokens));
        out.put(TOKEN_TYPE, GgufValue.array(GgufValueType.INT32, tokenTypes));
        out.put(MERGES, GgufValue.array(GgufValueType.STRING, merges));
        JsonNode config = Files.isRegularFile(modelDir.resolve("config.json")) ? json(modelDir.resolve("config.json")) : null;
        JsonNode tc = Files.isRegularFile(modelDir.resolve("tokenizer_config.json"))
                ? json(modelDir.resolve("tokenizer_config.json")) : null;
        // SpecialVocab: a token named in tokenizer_config.json (looked up among the added tokens) wins over config.json's id
        for (var e : SPECIAL_ID_KEYS.entrySet()) {
            String typ = e.getKey();
            String text = tc == null ? null : tokenText(tc.path(typ + "_token"));
            if (text != null && addedIds.containsKey(text)) {
                out.put(e.getValue(), GgufValue.u32(addedIds.get(text)));
            } else if (config != null && config.path(typ + "_token_id").isIntegralNumber() && config.get(typ + "_token_id").asLong() >= 0) {
                out.put(e.getValue(), GgufValue.u32(config.get(typ + "_token_id").asLong()));
            }
        }
        templateAddsBos(root, tc).ifPresent(b -> out.put("tokenizer.ggml.add_bos_token", GgufValue.of(GgufValueType.BOOL, b)));
        for (String typ : List.of("bos", "eos", "sep")) { // the add_*_token flags gguf-py's writer has keys for
            if (tc != null && tc.path("add_" + typ + "_token").isBoolean()) {
                out.put("tokenizer.ggml.add_" + typ + "_token", GgufValue.of(GgufValueType.BOOL, tc.get("add_" + typ + "_token").asBoolean()));
            }
        }
        // LlamaModel.set_vocab alone writes add_prefix_space, as add_space_prefix
        if (tc != null && tc.path("add_prefix_space").isBoolean() && config != null
                && config.path("architectures").path(0).asText().equals("LlamaForCausalLM")) {
            out.put("tokenizer.ggml.add_space_prefix", GgufValue.of(GgufValueType.BOOL, tc.get("add_prefix_space").asBoolean()));
        }
        chatTemplate(modelDir, tc).ifPresent(t -> out.put(CHAT_TEMPLATE, GgufValue.string(t)));
        return out;
    }

    /**
     * The special token kinds gguf-py's SpecialVocab looks up, in its order, and their keys (its
     * {@code cls} has no key, so the converter skips it; "seperator" is llama.cpp's spelling).
     */
    private static final Map<String, String> SPECIAL_ID_KEYS = orderedPairs(
            "bos", "tokenizer.ggml.bos_token_id",
            "eos", "tokenizer.ggml.eos_token_id",
            "unk", "tokenizer.ggml.unknown_token_id",
            "sep", "tokenizer.ggml.seperator_token_id",
            "pad", "tokenizer.ggml.padding_token_id",
            "mask", "tokenizer.ggml.mask_token_id");

    private static Map<String, String> orderedPairs(String... kv) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i], kv[i + 1]);
        }
        return java.util.Collections.unmodifiableMap(m);
    }

    /** llama.cpp's token types (llama_token_type). */
    private static final int NORMAL = 1;
    private static final int CONTROL = 3;
    private static final int USER_DEFINED = 4;
    private static final int UNUSED = 5;

    /**
     * The placeholder llama.cpp's converter writes at an id the tokenizer has no token for, so the
     * token list has one entry per embedding row: {@code [PAD<id>]}, of type unused.
     */
    public static String placeholder(int id) {
        return "[PAD" + id + "]";
    }

    /** The converter's {@code does_token_look_special} for the added tokens of byte-level BPE tokenizers. */
    static boolean looksSpecial(String token) {
        return token.equals("<pad>") || token.equals("<mask>") || token.equals("<2mass>") || token.equals("[@BOS@]")
                || (token.startsWith("<|") && token.endsWith("|>"))
                || (token.startsWith("<\uFF5C") && token.endsWith("\uFF5C>"))
                || (token.startsWith("<unused") && token.endsWith(">"));
    }

    /**
     * {@code metadata} with the token list extended to {@code rows} entries, the embedding's rows
     * (llama.cpp sizes the vocabulary from the list and checks {@code token_embd} against it): a
     * {@link #placeholder} of type unused per missing id, and, when the list has scores, a score
     * of -10000 (the converter's SentencePiece placeholders). Merges and special ids are unchanged;
     * metadata without a token list is returned as it is.
     *
     * @throws QlabException when the list has more tokens than the embedding has rows
     */
    public static Map<String, GgufValue> padTo(Map<String, GgufValue> metadata, int rows, String source) {
        GgufValue tokens = metadata.get(TOKENS);
        if (tokens == null) {
            return metadata;
        }
        int n = tokens.list().size();
        if (n > rows) {
            throw new QlabException(source + ": the tokenizer has " + n + " tokens, more than the " + rows
                    + " rows of the token embedding (field \"vocab_size\")");
        }
        if (n == rows) {
            return metadata;
        }
        Map<String, GgufValue> out = new LinkedHashMap<>(metadata);
        List<Object> padded = new ArrayList<>(tokens.list());
        for (int id = n; id < rows; id++) {
            padded.add(placeholder(id));
        }
        out.put(TOKENS, GgufValue.array(GgufValueType.STRING, padded));
        pad(out, TOKEN_TYPE, n, rows, (long) UNUSED, source);
        pad(out, SCORES, n, rows, -10000.0, source);
        return out;
    }

    /** Extends the per-token array {@code key}, if present, from {@code n} to {@code rows} entries of {@code fill}. */
    private static void pad(Map<String, GgufValue> m, String key, int n, int rows, Object fill, String source) {
        GgufValue v = m.get(key);
        if (v == null) {
            return;
        }
        if (v.type() != GgufValueType.ARRAY || v.list().size() != n) {
            throw new QlabException(source + ": field \"" + key + "\" has " + (v.type() == GgufValueType.ARRAY ? v.list().size() : 1)
                    + " entries, " + TOKENS + " has " + n);
        }
        List<Object> padded = new ArrayList<>(v.list());
        for (int id = n; id < rows; id++) {
            padded.add(fill);
        }
        m.put(key, GgufValue.array(v.elementType(), padded));
    }

    /**
     * The chat template as SpecialVocab finds it: tokenizer_config.json's {@code chat_template}
     * (a string), else chat_template.jinja, else chat_template.json's {@code chat_template}.
     */
    private static java.util.Optional<String> chatTemplate(Path modelDir, JsonNode tc) {
        if (tc == null) {
            return java.util.Optional.empty();
        }
        if (tc.path("chat_template").isTextual()) {
            return java.util.Optional.of(tc.get("chat_template").asText());
        }
        Path jinja = modelDir.resolve("chat_template.jinja");
        Path jsonFile = modelDir.resolve("chat_template.json");
        try {
            if (Files.isRegularFile(jinja)) {
                return java.util.Optional.of(Files.readString(jinja));
            }
        } catch (IOException e) {
            throw new QlabException(jinja + ": cannot read: " + e.getMessage());
        }
        if (Files.isRegularFile(jsonFile) && json(jsonFile).path("chat_template").isTextual()) {
            return java.util.Optional.of(json(jsonFile).get("chat_template").asText());
        }
        return java.util.Optional.empty();
    }

    /** A token named in tokenizer_config.json: a string, or an object with a {@code content} string. */
    private static String tokenText(JsonNode t) {
        return t.isTextual() ? t.asText() : t.path("content").isTextual() ? t.path("content").asText() : null;
    }

    /**
     * Whether the post-processor puts the BOS token before a text, as llama.cpp's converter reads it
     * when tokenizer_config.json does not say: a {@code TemplateProcessing} (alone or in a
     * {@code Sequence}) whose single-text template starts with a special token adds BOS when that
     * token is the configured {@code bos_token} (Llama 3's {@code <|begin_of_text|>}).
     */
    private static java.util.Optional<Boolean> templateAddsBos(JsonNode root, JsonNode tc) {
        JsonNode post = root.path("post_processor");
        List<JsonNode> processors = post.has("processors") ? iterable(post.path("processors")) : List.of(post);
        java.util.Optional<Boolean> out = java.util.Optional.empty();
        for (JsonNode p : processors) {
            JsonNode single = p.path("single");
            if (p.path("type").asText().equals("TemplateProcessing") && single.size() > 1
                    && single.get(0).path("SpecialToken").path("id").isTextual()) {
                String first = single.get(0).path("SpecialToken").path("id").asText();
                JsonNode bos = tc == null ? null : tc.path("bos_token");
                String bosText = bos == null ? null : bos.isTextual() ? bos.asText() : bos.path("content").asText(null);
                out = java.util.Optional.of(bosText == null || first.equals(bosText));
            }
        }
        return out;
    }

    private static String preName(Path file, JsonNode root) {
        JsonNode pre = root.path("pre_tokenizer");
        List<JsonNode> steps = pre.path("type").asText().equals("Sequence")
                ? iterable(pre.path("pretokenizers")) : List.of(pre);
        for (JsonNode s : steps) {
            if (s.path("type").asText().equals("Split")) {
                return Tokenizer.ggmlPreTokenizerName(s.path("pattern").path("Regex").asText()).orElseThrow(() ->
                        new QlabException(file + ": field \"pre_tokenizer\" splits by a pattern that has no llama.cpp "
                                + "pre-tokenizer name qlab knows " + Tokenizer.ggmlPreTokenizerNames()));
            }
        }
        throw new QlabException(file + ": field \"pre_tokenizer\" has no Split pattern; only Qwen2 and Llama 3 style tokenizers are exported");
    }

    private static List<JsonNode> iterable(JsonNode array) {
        List<JsonNode> l = new ArrayList<>();
        array.forEach(l::add);
        return l;
    }

    private static JsonNode json(Path file) {
        try {
            return new ObjectMapper().readTree(file.toFile());
        } catch (IOException e) {
            throw new QlabException(file + ": cannot read: " + e.getMessage().lines().findFirst().orElse(""));
        }
    }
}
