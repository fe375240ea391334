package qlab.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Path;
import java.util.function.Consumer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import qlab.engine.testing.Fixtures;

/**
 * qlab's tokenizer against the Hugging Face Rust library (DJL binding) on configurations the
 * fixtures do not cover, made by editing the real Qwen tokenizer.json: GPT-2 style ByteLevel regex,
 * the Llama 3 digit pattern, a Split pattern run through the regex translation, "Removed" splits,
 * NFKC, normalized added tokens, ignore_merges, SmolLM2's Digits before the ByteLevel regex. Inputs are
 * seeded random strings over characters where the pattern alternatives and Unicode class definitions are easy to get wrong.
 */
class TokenizerReferenceAgreementTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String QWEN2 =
            "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
    private static final String[] UNITS = {
        "a", "Z", "s", "S", "the", "The", "'", "'s", "'S", "'ll", "'LL", "'Re", "'ve", "'m", "'d", "'t", "ſ", "'ſ",
        "0", "7", "12345", "٣", "½", "Ⅷ", "𝟎", " ", " ", "  ", "   ", "\t", "\n", "\r\n", "\r", "\u000B", "\u000C",
        "\u0085", "\u00A0", "\u1680", "\u2003", "\u2028", "\u2029", "\u202F", "\u3000", "\u001C", "\u001F", "\u200B",
        "\uFEFF", "\u0000", "\u007F", ".", ",", "(", "\"", "-", "_", "!", "==", "->", "e\u0301", "\u0301", "\u0308",
        "ﬁ", "①", "Ａ", "ｈｅｌｌｏ", "中文", "日本語", "한국어", "😀", "👍🏽", "👨‍👩‍👧", "🇯🇵", "1️⃣", "𝐀", "ʰ", "ก", "\u0E31",
        "<|im_start|>", "<|im_end|>", "<|im_end|", "< |im_end|>", "<think>", "</think>", "<|endoftext|>", "<tool_call>",
        "<|IM_START|>", "<|fim_prefix|>", "https://x.y/z?q=1", "café", "naïve", "Hello", " world",
    };

    private static JsonNode original;
    @TempDir
    static Path dir;

    @BeforeAll
    static void load() throws IOException {
        System.setProperty("OPT_OUT_TRACKING", "true");
        Path file = Fixtures.oracle("tiny-qwen2-realvocab", "tokenizer.json");
        original = JSON.readTree(file.toFile());
    }

    private static void assertAgreement(String name, Consumer<ObjectNode> edit, long seed) throws IOException {
        ReferenceAgreement.assertAgreement(original, dir, name, edit, ReferenceAgreement.randomTexts(UNITS, seed, 2000, 16));
    }

    private static ObjectNode preStep(ObjectNode root, int i) {
        return (ObjectNode) root.get("pre_tokenizer").get("pretokenizers").get(i);
    }

    private static ObjectNode byteLevel(boolean useRegex) {
        ObjectNode bl = JSON.createObjectNode();
        bl.put("type", "ByteLevel");
        bl.put("add_prefix_space", false);
        bl.put("trim_offsets", true);
        bl.put("use_regex", useRegex);
        return bl;
    }

    @Test
    void qwenAsShipped() throws IOException {
        assertAgreement("qwen", r -> { }, 1);
    }

    @Test
    void gpt2StyleByteLevelRegexWithoutNormalizer() throws IOException {
        assertAgreement("gpt2-style", r -> {
            r.putNull("normalizer");
            r.set("pre_tokenizer", byteLevel(true));
        }, 2);
    }

    @Test
    void smolLm2StyleDigitsThenByteLevelRegex() throws IOException {
        assertAgreement("digits-bytelevel", r -> {
            r.putNull("normalizer");
            ObjectNode pre = r.putObject("pre_tokenizer").put("type", "Sequence");
            ArrayNode steps = pre.putArray("pretokenizers");
            steps.addObject().put("type", "Digits").put("individual_digits", true);
            steps.add(byteLevel(true));
        }, 7);
    }

    @Test
    void llama3DigitPattern() throws IOException {
        assertAgreement("llama3-digits", r -> ((ObjectNode) preStep(r, 0).get("pattern"))
                .put("Regex", QWEN2.replace("|\\p{N}|", "|\\p{N}{1,3}|")), 3);
    }

    @Test
    void translatedRegexPathWithRemovedBehaviour() throws IOException {
        // Equivalent to Qwen's pattern but spelled differently, so the hand-written scanner is not used.
        assertAgreement("translated-regex", r -> ((ObjectNode) preStep(r, 0).get("pattern"))
                .put("Regex", "(?:" + QWEN2 + ")"), 4);
        assertAgreement("removed-split", r -> {
            ((ObjectNode) preStep(r, 0).get("pattern")).put("Regex", "[\\s\\p{P}]+|\\d");
            preStep(r, 0).put("behavior", "Removed");
        }, 5);
    }

    @Test
    void nfkcWithNormalizedAddedTokensAndIgnoreMerges() throws IOException {
        assertAgreement("nfkc-normalized-added", r -> {
            ((ObjectNode) r.get("normalizer")).put("type", "NFKC");
            ArrayNode added = (ArrayNode) r.get("added_tokens");
            for (JsonNode t : added) {
                // Non-special ones become normalized, as the reference's default would make them.
                if (!t.get("special").asBoolean()) {
                    ((ObjectNode) t).put("normalized", true);
                }
            }
            ((ObjectNode) r.get("model")).put("ignore_merges", true);
        }, 6);
    }
}
