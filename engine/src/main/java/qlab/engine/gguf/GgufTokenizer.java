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
     * The {@code tokenizer.*} metadata of a Hugging Face model directory: normal tokens in id
     * order, added special tokens as control tokens (type 3), other added tokens as user-defined
     * (4), merges as "a b", the pre-tokenizer named by its split pattern, special token ids, and
     * the chat template of tokenizer_config.json.
     */
    public static Map<String, GgufValue> metadataOf(Path modelDir) {
        Path file = modelDir.resolve("tokenizer.json");
        JsonNode root = json(file);
        JsonNode vocab = root.path("model").path("vocab");
        if (!vocab.isObject()) {
            throw new QlabException(file + ": field \"model.vocab\" is missing or not an object");
        }
        Map<Integer, String> byId = new java.util.TreeMap<>();
        Map<Integer, Integer> types = new java.util.HashMap<>();
        vocab.fields().forEachRemaining(e -> byId.put(e.getValue().asInt(), e.getKey()));
        for (JsonNode t : root.path("added_tokens")) {
            byId.put(t.path("id").asInt(), t.path("content").asText());
            types.put(t.path("id").asInt(), t.path("special").asBoolean(false) ? 3 : 4);
        }
        int n = byId.isEmpty() ? 0 : ((java.util.TreeMap<Integer, String>) byId).lastKey() + 1;
        List<String> tokens = new ArrayList<>(n);
        List<Long> tokenTypes = new ArrayList<>(n);
        for (int id = 0; id < n; id++) {
            String t = byId.get(id);
            if (t == null) {
                throw new QlabException(file + ": field \"model.vocab\" has no token with id " + id + " (GGUF needs ids 0.." + (n - 1) + ")");
            }
            tokens.add(t);
            tokenTypes.add((long) types.getOrDefault(id, 1));
        }
        List<String> merges = new ArrayList<>();
        for (JsonNode m : root.path("model").path("merges")) {
            merges.add(m.isArray() ? m.get(0).asText() + " " + m.get(1).asText() : m.asText());
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
        Map<String, Integer> ids = new java.util.HashMap<>();
        for (int id = 0; id < n; id++) {
            ids.putIfAbsent(tokens.get(id), id);
        }
        putId(out, "tokenizer.ggml.bos_token_id", config, "bos_token_id", tc, "bos_token", ids);
        putId(out, "tokenizer.ggml.eos_token_id", tc, null, tc, "eos_token", ids);
        if (!out.containsKey("tokenizer.ggml.eos_token_id")) {
            putId(out, "tokenizer.ggml.eos_token_id", config, "eos_token_id", null, null, ids);
        }
        putId(out, "tokenizer.ggml.padding_token_id", null, null, tc, "pad_token", ids);
        if (tc != null && tc.path("add_bos_token").isBoolean()) {
            out.put("tokenizer.ggml.add_bos_token", GgufValue.of(GgufValueType.BOOL, tc.get("add_bos_token").asBoolean()));
        } else {
            templateAddsBos(root, tc).ifPresent(b -> out.put("tokenizer.ggml.add_bos_token", GgufValue.of(GgufValueType.BOOL, b)));
        }
        if (tc != null && tc.path("chat_template").isTextual()) {
            out.put(CHAT_TEMPLATE, GgufValue.string(tc.get("chat_template").asText()));
        }
        return out;
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

    /** A special token id from an integer field, or from a token named in another field. */
    private static void putId(Map<String, GgufValue> out, String key, JsonNode intSource, String intField,
            JsonNode tokenSource, String tokenField, Map<String, Integer> ids) {
        if (intSource != null && intField != null && intSource.path(intField).canConvertToInt()
                && intSource.path(intField).isIntegralNumber()) {
            out.put(key, GgufValue.u32(intSource.get(intField).asInt()));
            return;
        }
        if (tokenSource != null && tokenField != null) {
            JsonNode t = tokenSource.path(tokenField);
            String text = t.isTextual() ? t.asText() : t.path("content").isTextual() ? t.path("content").asText() : null;
            if (text != null && ids.containsKey(text)) {
                out.put(key, GgufValue.u32(ids.get(text)));
            }
        }
    }

    private static JsonNode json(Path file) {
        try {
            return new ObjectMapper().readTree(file.toFile());
        } catch (IOException e) {
            throw new QlabException(file + ": cannot read: " + e.getMessage().lines().findFirst().orElse(""));
        }
    }
}
