package qlab.engine.tokenizer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import qlab.engine.QlabException;

/**
 * Loading small hand-made tokenizer files: every unsupported or malformed field is refused with one
 * line naming the file and the field; supported variants (GPT-2 style ByteLevel regex, normalized
 * added tokens, ignore_merges) load and behave as specified.
 */
class TokenizerLoadErrorsTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    /** A complete byte-level tokenizer: 256 byte symbols, merges h+e, he+l, l+o, and two added tokens. */
    static ObjectNode miniTokenizer() {
        ObjectNode root = JSON.createObjectNode();
        root.put("version", "1.0");
        root.putNull("truncation");
        root.putNull("padding");
        ArrayNode added = root.putArray("added_tokens");
        added.add(addedToken(300, "<|end|>", true));
        added.add(addedToken(301, "<tool>", false));
        root.putObject("normalizer").put("type", "NFC");
        ObjectNode pre = root.putObject("pre_tokenizer");
        pre.put("type", "Sequence");
        ObjectNode split = pre.putArray("pretokenizers").addObject();
        split.put("type", "Split");
        split.putObject("pattern").put("Regex", Qwen2PatternScanner.QWEN2_PATTERN);
        split.put("behavior", "Isolated");
        split.put("invert", false);
        ObjectNode byteLevel = ((ArrayNode) pre.get("pretokenizers")).addObject();
        byteLevel.put("type", "ByteLevel");
        byteLevel.put("add_prefix_space", false);
        byteLevel.put("trim_offsets", false);
        byteLevel.put("use_regex", false);
        root.set("post_processor", byteLevel.deepCopy());
        root.set("decoder", byteLevel.deepCopy());
        ObjectNode model = root.putObject("model");
        model.put("type", "BPE");
        model.putNull("dropout");
        model.putNull("unk_token");
        model.put("continuing_subword_prefix", "");
        model.put("end_of_word_suffix", "");
        model.put("fuse_unk", false);
        model.put("byte_fallback", false);
        model.put("ignore_merges", false);
        ObjectNode vocab = model.putObject("vocab");
        for (int b = 0; b < 256; b++) {
            vocab.put(String.valueOf(ByteLevelAlphabet.charOf(b)), b);
        }
        vocab.put("he", 256);
        vocab.put("hel", 257);
        vocab.put("lo", 258);
        vocab.put("Ġh", 259);
        ArrayNode merges = model.putArray("merges");
        merges.addArray().add("h").add("e");
        merges.addArray().add("he").add("l");
        merges.add("l o");
        merges.addArray().add("Ġ").add("h");
        return root;
    }

    private static ObjectNode addedToken(int id, String content, boolean special) {
        ObjectNode t = JSON.createObjectNode();
        t.put("id", id);
        t.put("content", content);
        t.put("single_word", false);
        t.put("lstrip", false);
        t.put("rstrip", false);
        t.put("normalized", false);
        t.put("special", special);
        return t;
    }

    private Path write(ObjectNode root) throws IOException {
        Path p = dir.resolve("tokenizer.json");
        JSON.writeValue(p.toFile(), root);
        return p;
    }

    private Tokenizer load(Consumer<ObjectNode> edit) throws IOException {
        ObjectNode root = miniTokenizer();
        edit.accept(root);
        return Tokenizer.load(write(root));
    }

    private void assertRejected(String field, Consumer<ObjectNode> edit) throws IOException {
        ObjectNode root = miniTokenizer();
        edit.accept(root);
        Path p = write(root);
        QlabException e = assertThrows(QlabException.class, () -> Tokenizer.load(p));
        assertTrue(e.getMessage().contains("\"" + field + "\""), e.getMessage());
        assertTrue(e.getMessage().startsWith(p.toString()), e.getMessage());
        assertFalse(e.getMessage().contains("\n"), e.getMessage());
    }

    private static ObjectNode model(ObjectNode root) {
        return (ObjectNode) root.get("model");
    }

    private static ObjectNode preStep(ObjectNode root, int i) {
        return (ObjectNode) root.get("pre_tokenizer").get("pretokenizers").get(i);
    }

    @Test
    void theMiniTokenizerWorks() throws IOException {
        Tokenizer t = load(r -> { });
        // "hello" -> h e l l o -> he l l o -> hel l o -> hel lo; " h" -> Ġh.
        assertArrayEquals(new int[] {257, 258, 259, 'i'}, t.encode("hello hi"));
        assertArrayEquals(new int[] {300, 301, '<', 't', 'o', 'o', 'l'}, t.encode("<|end|><tool><tool"));
        assertEquals("hello hi", t.decode(t.encode("hello hi")));
        assertEquals("<tool>", t.decode(new int[] {300, 301}, true));
        assertEquals(302, t.vocabSize());
    }

    @Test
    void directoryHoldingTokenizerJsonLoads() throws IOException {
        write(miniTokenizer());
        assertEquals(302, Tokenizer.load(dir).vocabSize());
    }

    @Test
    void malformedJsonNamesTheFile() throws IOException {
        Path p = dir.resolve("tokenizer.json");
        Files.writeString(p, "{\"model\": {\"type\": \"BPE\",, }");
        QlabException e = assertThrows(QlabException.class, () -> Tokenizer.load(p));
        assertTrue(e.getMessage().startsWith(p + ": malformed JSON"), e.getMessage());
        assertFalse(e.getMessage().contains("\n"), e.getMessage());
    }

    @Test
    void truncatedFileNamesTheFile() throws IOException {
        byte[] whole = JSON.writeValueAsBytes(miniTokenizer());
        Path p = dir.resolve("tokenizer.json");
        Files.write(p, java.util.Arrays.copyOf(whole, whole.length / 2));
        QlabException e = assertThrows(QlabException.class, () -> Tokenizer.load(p));
        assertTrue(e.getMessage().startsWith(p + ": malformed JSON"), e.getMessage());
        assertFalse(e.getMessage().contains("\n"), e.getMessage());
        Files.write(p, new byte[0]);
        QlabException empty = assertThrows(QlabException.class, () -> Tokenizer.load(p));
        assertTrue(empty.getMessage().startsWith(p.toString()), empty.getMessage());
    }

    @Test
    void missingFileNamesThePath() {
        QlabException e = assertThrows(QlabException.class, () -> Tokenizer.load(dir));
        assertTrue(e.getMessage().contains("tokenizer.json"), e.getMessage());
    }

    @Test
    void unsupportedModelTypesAndOptionsAreRefused() throws IOException {
        assertRejected("model.type", r -> model(r).put("type", "WordPiece"));
        assertRejected("model.dropout", r -> model(r).put("dropout", 0.1));
        assertRejected("model.byte_fallback", r -> model(r).put("byte_fallback", "yes"));
        assertRejected("model.unk_token", r -> model(r).put("unk_token", 5));
        assertRejected("model.continuing_subword_prefix", r -> model(r).put("continuing_subword_prefix", "##"));
        assertRejected("model.end_of_word_suffix", r -> model(r).put("end_of_word_suffix", "</w>"));
        assertRejected("model.vocab", r -> ((ObjectNode) model(r).get("vocab")).remove("Ġ"));
        assertRejected("model.merges[2]", r -> ((ArrayNode) model(r).get("merges")).set(2, JSON.getNodeFactory().textNode("l  o")));
        assertRejected("model.merges[1]", r -> ((ArrayNode) model(r).get("merges").get(1)).set(1, JSON.getNodeFactory().textNode("zz")));
        assertRejected("model.merges", r -> model(r).remove("merges"));
        assertRejected("model.some_new_option", r -> model(r).put("some_new_option", 1));
    }

    @Test
    void unsupportedPipelineStagesAreRefused() throws IOException {
        assertRejected("pre_tokenizer.pretokenizers[0].type", r -> preStep(r, 0).put("type", "Whitespace"));
        assertRejected("pre_tokenizer.pretokenizers[0].behavior", r -> preStep(r, 0).put("behavior", "MergedWithBoth"));
        assertRejected("pre_tokenizer.pretokenizers[0].invert", r -> preStep(r, 0).put("invert", "yes"));
        assertRejected("pre_tokenizer.pretokenizers[0].pattern.Regex",
                r -> ((ObjectNode) preStep(r, 0).get("pattern")).put("Regex", "^\\s+"));
        assertRejected("pre_tokenizer.pretokenizers[1].add_prefix_space", r -> preStep(r, 1).put("add_prefix_space", true));
        // Without a ByteLevel pre-tokenizer the vocabulary is not byte-level, and the ByteLevel decoder does not fit.
        assertRejected("decoder.type", r -> r.putNull("pre_tokenizer"));
        assertRejected("normalizer.type", r -> ((ObjectNode) r.get("normalizer")).put("type", "Lowercase"));
        assertRejected("decoder.type", r -> ((ObjectNode) r.get("decoder")).put("type", "WordPiece"));
        assertRejected("post_processor.type", r -> ((ObjectNode) r.get("post_processor")).put("type", "RobertaProcessing"));
        assertRejected("post_processor.special_tokens", r -> ((ObjectNode) r.get("post_processor")).removeAll()
                .put("type", "TemplateProcessing").putArray("single").addObject().putObject("SpecialToken").put("id", "<|end|>"));
        assertRejected("truncation", r -> r.putObject("truncation").put("max_length", 8));
        assertRejected("padding", r -> r.putObject("padding").put("strategy", "BatchLongest"));
        assertRejected("something_else", r -> r.put("something_else", true));
    }

    @Test
    void strippingAddedTokensTakeTheWhitespaceBesideThem() throws IOException {
        Tokenizer t = load(r -> {
            ((ObjectNode) r.get("added_tokens").get(0)).put("lstrip", true);
            ((ObjectNode) r.get("added_tokens").get(1)).put("rstrip", true);
        });
        // "lo  <|end|>" loses the spaces before <|end|>; "<tool>  lo" the spaces after <tool>.
        assertArrayEquals(new int[] {258, 300}, t.encode("lo  <|end|>"));
        assertArrayEquals(new int[] {301, 258}, t.encode("<tool>  lo"));
        // Between two tokens, the whitespace goes to the first that takes it.
        assertArrayEquals(new int[] {301, 300, 258}, t.encode("<tool> \t <|end|>lo"));
    }

    @Test
    void unsupportedAddedTokenFlagsAreRefused() throws IOException {
        assertRejected("added_tokens[0].single_word", r -> ((ObjectNode) r.get("added_tokens").get(0)).put("single_word", true));
        assertRejected("added_tokens[1].rstrip", r -> ((ObjectNode) r.get("added_tokens").get(1)).put("rstrip", "yes"));
        assertRejected("added_tokens[1].single_word", r -> ((ObjectNode) r.get("added_tokens").get(1)).put("single_word", true));
        assertRejected("added_tokens[0].content", r -> ((ObjectNode) r.get("added_tokens").get(0)).put("content", ""));
        assertRejected("added_tokens[0].id", r -> ((ObjectNode) r.get("added_tokens").get(0)).put("id", "x"));
    }

    @Test
    void byteLevelRegexVariantSplitsLikeGpt2() throws IOException {
        Consumer<ObjectNode> digitMerge = r -> {
            ((ObjectNode) model(r).get("vocab")).put("12", 261).put("'S", 262);
            ((ArrayNode) model(r).get("merges")).add("1 2").add("' S");
        };
        Tokenizer gpt2 = load(r -> {
            digitMerge.accept(r);
            ObjectNode bl = preStep(r, 1).deepCopy();
            bl.put("use_regex", true);
            r.set("pre_tokenizer", bl);
        });
        Tokenizer qwen = load(digitMerge);
        // GPT-2's pattern keeps a digit run in one pre-token; Qwen's takes one digit at a time.
        assertArrayEquals(new int[] {261, 259, 'i'}, gpt2.encode("12 hi"));
        assertArrayEquals(new int[] {'1', '2', 259, 'i'}, qwen.encode("12 hi"));
        // GPT-2's contractions are case-sensitive, Qwen's are not: "'S" is one pre-token only for Qwen.
        assertArrayEquals(new int[] {'\'', 'S', 'x'}, gpt2.encode("'Sx"));
        assertArrayEquals(new int[] {262, 'x'}, qwen.encode("'Sx"));
        assertEquals("12 hi", gpt2.decode(gpt2.encode("12 hi")));
    }

    @Test
    void normalizedAddedTokensMatchAfterNormalization() throws IOException {
        Tokenizer t = load(r -> {
            ObjectNode tok = (ObjectNode) r.get("added_tokens").get(1);
            tok.put("normalized", true);
            tok.put("content", "e\u0301");
        });
        // "e" + combining acute becomes "é" under NFC, which the normalized added token (NFC'd) matches.
        assertArrayEquals(new int[] {301}, t.encode("e\u0301"));
        assertArrayEquals(new int[] {301}, t.encode("\u00E9"));
    }

    @Test
    void ignoreMergesTakesWholeVocabularyEntries() throws IOException {
        Tokenizer t = load(r -> {
            model(r).put("ignore_merges", true);
            ((ObjectNode) model(r).get("vocab")).put("hl", 260);
        });
        // "hl" has no merge rule but is a vocabulary entry: taken whole.
        assertArrayEquals(new int[] {260}, t.encode("hl"));
        Tokenizer plain = load(r -> ((ObjectNode) model(r).get("vocab")).put("hl", 260));
        assertArrayEquals(new int[] {'h', 'l'}, plain.encode("hl"));
    }
}
