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
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import qlab.engine.QlabException;

/**
 * The pieces of non-byte-level tokenizers one at a time, with the reference library's own examples where it
 * has them: Metaspace (prepend schemes, split), Split behaviors, Digits, unknown-character handling, and the
 * decoder steps; then a small SentencePiece-style file through the loader, and what the loader refuses.
 */
class SentencePieceComponentsTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private static List<String> pieces(PieceSplitter splitter, String text, boolean atInputStart) {
        List<String> out = new ArrayList<>();
        splitter.split(text, 0, text.length(), atInputStart, (t, s, e) -> out.add(t.substring(s, e)));
        return out;
    }

    @Test
    void metaspaceReplacesSpacesPrependsAndSplits() {
        MetaspaceSplitter always = new MetaspaceSplitter("▁", MetaspaceSplitter.PrependScheme.ALWAYS, true);
        assertEquals(List.of("▁Hey", "▁", "▁", "▁friend!"), pieces(always, "Hey   friend!", false));
        assertEquals(List.of("▁how", "▁are", "▁you"), pieces(always, "how▁are you", false));
        MetaspaceSplitter first = new MetaspaceSplitter("▁", MetaspaceSplitter.PrependScheme.FIRST, false);
        assertEquals(List.of("▁Hey▁my▁friend▁"), pieces(first, "Hey my friend ", true));
        assertEquals(List.of("how▁are▁you"), pieces(first, "how▁are you", false));
        assertEquals(List.of("▁Hey▁"), pieces(first, " Hey ", true));
        MetaspaceSplitter never = new MetaspaceSplitter("▁", MetaspaceSplitter.PrependScheme.NEVER, true);
        assertEquals(List.of("Hey", "▁friend"), pieces(never, "Hey friend", true));
    }

    @Test
    void splitBehaviorsGroupDelimitersAsTheReferenceDoes() {
        Pattern dash = TranslatedRegexSplitter.literal("-");
        String text = "The-final--countdown";
        Map<SplitBehavior, List<String>> expected = Map.of(
                SplitBehavior.REMOVED, List.of("The", "final", "countdown"),
                SplitBehavior.ISOLATED, List.of("The", "-", "final", "-", "-", "countdown"),
                SplitBehavior.MERGED_WITH_PREVIOUS, List.of("The-", "final-", "-", "countdown"),
                SplitBehavior.MERGED_WITH_NEXT, List.of("The", "-final", "-", "-countdown"),
                SplitBehavior.CONTIGUOUS, List.of("The", "-", "final", "--", "countdown"));
        for (Map.Entry<SplitBehavior, List<String>> e : expected.entrySet()) {
            assertEquals(e.getValue(), pieces(new TranslatedRegexSplitter(dash, e.getKey(), false), text, false),
                    e.getKey().toString());
        }
        // invert: the pattern matches the pieces to keep, the rest are the delimiters.
        Pattern word = Pattern.compile("[A-Za-z]+");
        assertEquals(List.of("The", "-final", "--countdown"),
                pieces(new TranslatedRegexSplitter(word, SplitBehavior.MERGED_WITH_NEXT, true), "The-final--countdown", false));
    }

    @Test
    void digitsAreCutAloneOrInRuns() {
        assertEquals(List.of("Hey ", "1", "2", "3", " friend ", "4", "٥"), pieces(new DigitsSplitter(true), "Hey 123 friend 4٥", false));
        assertEquals(List.of("Hey ", "123", " friend ", "4٥"), pieces(new DigitsSplitter(false), "Hey 123 friend 4٥", false));
    }

    @Test
    void unknownCharactersBecomeTheUnknownToken() {
        Map<String, Integer> vocab = Map.of("<unk>", 0, "a", 1, "b", 2);
        IntList fused = new IntList(4);
        new CharSymbols(vocab, null, 0, true).spell("accb", 0, 4, fused);
        assertArrayEquals(new int[] {1, 0, 2}, fused.toArray());
        IntList apart = new IntList(4);
        new CharSymbols(vocab, null, 0, false).spell("accb", 0, 4, apart);
        assertArrayEquals(new int[] {1, 0, 0, 2}, apart.toArray());
        IntList dropped = new IntList(4);
        new CharSymbols(vocab, null, -1, false).spell("accb", 0, 4, dropped);
        assertArrayEquals(new int[] {1, 2}, dropped.toArray());
    }

    @Test
    void decoderStepsActAsTheReferenceDescribes() {
        assertEquals(List.of("ey", " friend!", "HH"),
                new DecoderChain.Strip('H', 1, 0).apply(List.of("Hey", " friend!", "HHH")));
        assertEquals(List.of("He", " friend!"), new DecoderChain.Strip('y', 0, 1).apply(List.of("Hey", " friend!")));
        assertEquals(List.of("Hey", " friend!"),
                new DecoderChain.Metaspace("▁", true).apply(List.of("▁Hey", "▁friend!")));
        assertEquals(List.of(" Hey", " friend!"),
                new DecoderChain.Metaspace("▁", false).apply(List.of("▁Hey", "▁friend!")));
        assertEquals(List.of("叫", "a"), new DecoderChain.ByteFallback().apply(List.of("<0xE5>", "<0x8f>", "<0xab>", "a")));
        assertEquals(List.of("\uFFFD", "\uFFFD", "a"), new DecoderChain.ByteFallback().apply(List.of("<0xE5>", "<0x8f>", "a")));
        assertEquals(-1, DecoderChain.ByteFallback.byteOf("<0xG0>"));
        assertEquals("a b", new DecoderChain(null).decode(List.of("a", "b")));
    }

    // ---------------------------------------------------------------- through the loader

    /** Llama 2 style: Prepend + Replace normalizer, no pre-tokenizer, byte fallback, the four-step decoder. */
    static ObjectNode miniSentencePiece() {
        ObjectNode root = JSON.createObjectNode();
        ArrayNode added = root.putArray("added_tokens");
        ObjectNode bos = added.addObject();
        bos.put("id", 1).put("content", "<s>").put("normalized", false).put("special", true);
        ArrayNode norms = root.putObject("normalizer").put("type", "Sequence").putArray("normalizers");
        norms.addObject().put("type", "Prepend").put("prepend", "▁");
        ObjectNode replace = norms.addObject().put("type", "Replace").put("content", "▁");
        replace.putObject("pattern").put("String", " ");
        root.putNull("pre_tokenizer");
        ArrayNode decoders = root.putObject("decoder").put("type", "Sequence").putArray("decoders");
        ObjectNode back = decoders.addObject().put("type", "Replace").put("content", " ");
        back.putObject("pattern").put("String", "▁");
        decoders.addObject().put("type", "ByteFallback");
        decoders.addObject().put("type", "Fuse");
        decoders.addObject().put("type", "Strip").put("content", " ").put("start", 1).put("stop", 0);
        ObjectNode model = root.putObject("model");
        model.put("type", "BPE").put("unk_token", "<unk>").put("fuse_unk", true).put("byte_fallback", true);
        ObjectNode vocab = model.putObject("vocab");
        vocab.put("<unk>", 0).put("<s>", 1);
        for (int b = 0; b < 256; b++) {
            vocab.put(CharSymbols.byteTokenText(b), 2 + b);
        }
        vocab.put("▁", 258).put("h", 259).put("i", 260).put("▁h", 261).put("▁hi", 262);
        model.putArray("merges").add("▁ h").add("▁h i");
        return root;
    }

    private Tokenizer load(Consumer<ObjectNode> edit) throws IOException {
        ObjectNode root = miniSentencePiece();
        edit.accept(root);
        Path p = dir.resolve("tokenizer.json");
        JSON.writeValue(p.toFile(), root);
        return Tokenizer.load(p);
    }

    @Test
    void aSentencePieceFileEncodesAndDecodes() throws IOException {
        Tokenizer t = load(r -> { });
        // "hi hi!": ▁hi▁hi! -> ▁hi ▁hi, then "!" (0x21) by byte fallback.
        assertArrayEquals(new int[] {262, 262, 2 + 0x21}, t.encode("hi hi!"));
        assertEquals("hi hi!", t.decode(t.encode("hi hi!")));
        assertArrayEquals(new int[] {1, 262}, t.encode("<s>hi"));
        assertEquals("<s> hi", t.decode(new int[] {1, 262}));
    }

    @Test
    void aMetaspacePreTokenizerPrependsOnlyAtTheStartWithSchemeFirst() throws IOException {
        Tokenizer t = load(r -> {
            r.putNull("normalizer");
            r.putObject("pre_tokenizer").put("type", "Metaspace").put("replacement", "▁")
                    .put("prepend_scheme", "first").put("split", false);
        });
        assertArrayEquals(new int[] {262, 262}, t.encode("hi hi"));
        // After an added token the text is not at the start of the input: no ▁ in front of "hi".
        assertArrayEquals(new int[] {1, 259, 260}, t.encode("<s>hi"));
    }

    private void assertRejected(String field, Consumer<ObjectNode> edit) {
        QlabException e = assertThrows(QlabException.class, () -> load(edit));
        assertTrue(e.getMessage().contains("\"" + field + "\""), e.getMessage());
        assertFalse(e.getMessage().contains("\n"), e.getMessage());
    }

    @Test
    void unsupportedComponentsAreRefusedNamingTheField() {
        assertRejected("normalizer.normalizers[0].type", r -> ((ObjectNode) r.get("normalizer").get("normalizers").get(0))
                .put("type", "Lowercase"));
        assertRejected("normalizer.normalizers[1].content", r -> {
            ObjectNode replace = (ObjectNode) r.get("normalizer").get("normalizers").get(1);
            replace.put("content", "$1");
            replace.putObject("pattern").put("Regex", "(a)");
        });
        assertRejected("normalizer.normalizers[1].pattern.Regex", r -> ((ObjectNode) r.get("normalizer").get("normalizers")
                .get(1)).putObject("pattern").put("Regex", "a*"));
        assertRejected("decoder.decoders[3].content", r -> ((ObjectNode) r.get("decoder").get("decoders").get(3))
                .put("content", "ab"));
        assertRejected("decoder.decoders[2].type", r -> ((ObjectNode) r.get("decoder").get("decoders").get(2))
                .put("type", "CTC"));
        assertRejected("decoder.type", r -> ((ObjectNode) r.get("decoder")).removeAll().put("type", "ByteLevel"));
        assertRejected("pre_tokenizer.add_prefix_space", r -> r.putObject("pre_tokenizer").put("type", "Metaspace")
                .put("replacement", "▁").put("prepend_scheme", "always").put("add_prefix_space", false));
        assertRejected("pre_tokenizer.prepend_scheme", r -> r.putObject("pre_tokenizer").put("type", "Metaspace")
                .put("replacement", "▁").put("prepend_scheme", "sometimes"));
        assertRejected("pre_tokenizer.type", r -> r.putObject("pre_tokenizer").put("type", "Punctuation"));
        assertRejected("model.unk_token", r -> {
            ObjectNode model = (ObjectNode) r.get("model");
            model.put("unk_token", "<nope>").put("byte_fallback", false);
        });
    }
}
