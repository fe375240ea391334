package qlab.bench;

import qlab.engine.testing.Fixtures;
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

/**
 * qlab's SentencePiece-style BPE against the Hugging Face Rust library (DJL binding) on the combinations of
 * components other families ship, made by editing the Llama 2 tokenizer.json of the fixtures: the Metaspace
 * pre-tokenizer with each prepend scheme, with and without split (Mistral, newer Llama 2 conversions), the
 * Gemma normalizer and decoder, unknown-token handling without byte fallback, Split behaviors and Digits,
 * ignore_merges, the Metaspace decoder, no decoder at all.
 */
class SentencePieceReferenceAgreementTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String[] UNITS = {
        "a", "Z", "the", " the", "The", "hello", " world", " ", "  ", "   ", "\t", "\n", "\r\n", "▁", "▁▁", " ▁",
        "0", "7", "12345", "٣", "½", "'s", "n't", ".", ",", "!", "-", "--", "(", "\"", "==", "->", "é", "e\u0301",
        "中文", "日本語", "한국어", "😀", "👍🏽", "👨‍👩‍👧", "\uE000", "\uF8FF", "𖠀", "𝐀", "\u0000", "\u007F", "\u00A0",
        "\u3000", "\uFEFF", "<s>", "</s>", "<x>", " <x> ", "<unk>", "<s", "<0x41>", "Hello", "café", "https://x.y/z?q=1",
    };

    private static JsonNode original;
    @TempDir
    static Path dir;

    @BeforeAll
    static void load() throws IOException {
        System.setProperty("OPT_OUT_TRACKING", "true");
        Path file = Fixtures.oracle("tokenizer-spbpe", "tokenizer.json");
        original = JSON.readTree(file.toFile());
    }

    private static void assertAgreement(String name, Consumer<ObjectNode> edit, long seed) throws IOException {
        ReferenceAgreement.assertAgreement(original, dir, name, edit, ReferenceAgreement.randomTexts(UNITS, seed, 1500, 12));
    }

    private static ObjectNode metaspace(String scheme, boolean split) {
        ObjectNode m = JSON.createObjectNode();
        m.put("type", "Metaspace").put("replacement", "▁").put("prepend_scheme", scheme).put("split", split);
        return m;
    }

    private static ArrayNode decoders(ObjectNode root) {
        return (ArrayNode) root.get("decoder").get("decoders");
    }

    @Test
    void llama2AsShipped() throws IOException {
        assertAgreement("llama2", r -> { }, 1);
    }

    @Test
    void metaspacePreTokenizerWithEachPrependScheme() throws IOException {
        for (String scheme : new String[] {"first", "always", "never"}) {
            for (boolean split : new boolean[] {false, true}) {
                assertAgreement("metaspace-" + scheme + "-" + split, r -> {
                    r.putNull("normalizer");
                    r.set("pre_tokenizer", metaspace(scheme, split));
                }, scheme.hashCode() + (split ? 1 : 0));
            }
        }
    }

    @Test
    void metaspaceDecoder() throws IOException {
        for (String scheme : new String[] {"first", "never"}) {
            assertAgreement("metaspace-decoder-" + scheme, r -> {
                r.putNull("normalizer");
                r.set("pre_tokenizer", metaspace(scheme, true));
                r.set("decoder", metaspace(scheme, true));
            }, 7 + scheme.length());
        }
    }

    @Test
    void gemmaStyleReplaceOnlyAndNoStrip() throws IOException {
        assertAgreement("gemma-style", r -> {
            ObjectNode replace = (ObjectNode) r.get("normalizer").get("normalizers").get(1);
            r.set("normalizer", replace);
            decoders(r).remove(3);
        }, 11);
    }

    @Test
    void addedTokensThatStripWhitespace() throws IOException {
        assertAgreement("lstrip-rstrip", r -> {
            ArrayNode added = (ArrayNode) r.get("added_tokens");
            ((ObjectNode) added.get(1)).put("rstrip", true);
            ((ObjectNode) added.get(2)).put("lstrip", true);
            ObjectNode both = added.addObject();
            both.put("id", 32000).put("content", "<x>").put("single_word", false).put("lstrip", true)
                    .put("rstrip", true).put("normalized", true).put("special", false);
        }, 17);
    }

    @Test
    void unknownTokenWithoutByteFallback() throws IOException {
        for (boolean fuse : new boolean[] {true, false}) {
            assertAgreement("unk-fuse-" + fuse, r -> ((ObjectNode) r.get("model")).put("byte_fallback", false)
                    .put("fuse_unk", fuse), 12);
        }
    }

    @Test
    void splitBehaviorsDigitsAndIgnoreMerges() throws IOException {
        for (String behavior : new String[] {"MergedWithPrevious", "MergedWithNext", "Contiguous", "Isolated", "Removed"}) {
            assertAgreement("split-" + behavior, r -> {
                ObjectNode pre = r.putObject("pre_tokenizer").put("type", "Sequence");
                ArrayNode steps = pre.putArray("pretokenizers");
                ObjectNode split = steps.addObject().put("type", "Split").put("behavior", behavior).put("invert", false);
                split.putObject("pattern").put("String", "▁");
                steps.addObject().put("type", "Digits").put("individual_digits", behavior.equals("Isolated"));
            }, 13 + behavior.length());
        }
        assertAgreement("ignore-merges", r -> ((ObjectNode) r.get("model")).put("ignore_merges", true), 14);
    }

    /** (A Strip from the end is not compared: the reference aborts the process when it decodes to nothing.) */
    @Test
    void templateAddingBeginningAndEnd() throws IOException {
        assertAgreement("template-bos-eos", r -> {
            ObjectNode template = (ObjectNode) r.get("post_processor");
            ArrayNode single = template.putArray("single");
            single.addObject().putObject("SpecialToken").put("id", "<s>").put("type_id", 0);
            single.addObject().putObject("Sequence").put("id", "A").put("type_id", 0);
            single.addObject().putObject("SpecialToken").put("id", "</s>").put("type_id", 0);
            ObjectNode eos = ((ObjectNode) template.get("special_tokens")).putObject("</s>");
            eos.put("id", "</s>");
            eos.putArray("ids").add(2);
            eos.putArray("tokens").add("</s>");
        }, 18);
    }

    @Test
    void noDecoder() throws IOException {
        assertAgreement("no-decoder", r -> r.putNull("decoder"), 16);
    }
}
