package qlab.engine.tokenizer.train;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.text.Normalizer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import qlab.engine.tokenizer.Tokenizer;

/**
 * Loads the tokenizer.json we write with the Hugging Face Rust tokenizers (through DJL), the
 * library transformers and most tools use, and checks that it accepts the file, round-trips
 * text it never saw, and splits text exactly as our trainer's own rules say it should (which
 * also checks that Java's reading of the split regex agrees with Oniguruma's).
 */
class TrainedTokenizerReferenceTest {

    /** The tiny preset's vocab_size. */
    private static final int MODEL_VOCAB = 4096;

    private static final List<String> HELD_OUT = List.of(
            "The quick brown fox jumps over the lazy dog. It's 3.14159, isn't it? I'LL SEE—you'd agree…",
            "public static void main(String[] args) {\n\tSystem.out.println(\"héllo\\n\");\n    return x -> x * 2; // λ\n}\r\n",
            "量化模型的困惑度：我们在本地计算，不需要下载权重。“引号”和（括号）都在这里。",
            "日本語のテキストとカタカナ、한국어 문장입니다. Ελληνικά и русский текст.",
            "emoji 😀👍🏽 family 👩‍👩‍👧 flag 🇨🇭 plane ✈️ math 𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
            "   leading\n\n\n\ttabs\t\t and  double  spaces   \r\n\r\n trailing   ",
            "a\u00a0b\u2009c\u3000d\u2028e\u0085f\u000bg\u000ch\u200bi",
            "Cafe\u0301 man\u0303ana A\u030a \u212b ﬁ ligature Ωmega",
            "١٢٣ ๑๒๓ ½ ² Ⅻ 2024-11-30 0x7fff_ffff 1e-6",
            "ſ's It'S we'Re THEY'VE o'clock rock'n'roll '''quoted'''",
            "\u0000 control \u0001\u007f soft\u00adhyphen \ufeffbom",
            "");

    @TempDir
    static Path dir;

    private static TrainedBpe bpe;
    private static HuggingFaceTokenizer hf;
    private static List<String> corpus;

    @BeforeAll
    static void trainWriteAndLoad() throws IOException {
        System.setProperty("OPT_OUT_TRACKING", "true");
        corpus = TestCorpus.documents(1, 200_000);
        bpe = SyntheticTokenizer.write(dir.resolve("tiny"), MODEL_VOCAB, 32768, corpus);
        hf = load(dir.resolve("tiny"));
    }

    @AfterAll
    static void close() {
        if (hf != null) {
            hf.close();
        }
    }

    private static HuggingFaceTokenizer load(Path modelDir) throws IOException {
        return HuggingFaceTokenizer.builder()
                .optTokenizerPath(modelDir)
                .optAddSpecialTokens(false)
                .optTruncation(false)
                .optPadding(false)
                .build();
    }

    @Test
    void heldOutTextRoundTripsWithIdsInsideTheVocabulary() {
        assertEquals(MODEL_VOCAB, bpe.size());
        List<String> texts = new ArrayList<>(HELD_OUT);
        texts.addAll(TestCorpus.documents(999, 6_000));
        for (String text : texts) {
            long[] ids = hf.encode(text, false, false).getIds();
            for (long id : ids) {
                assertTrue(id >= 0 && id < bpe.size(), "id " + id + " for " + text);
            }
            assertEquals(Normalizer.normalize(text, Normalizer.Form.NFC), hf.decode(ids, false), text);
        }
    }

    @Test
    void rustLibrarySplitsExactlyAsOurRulesSay() {
        List<String> texts = new ArrayList<>(HELD_OUT);
        texts.addAll(TestCorpus.documents(998, 6_000));
        texts.addAll(corpus.subList(0, 30));
        BpeByRank reference = new BpeByRank(bpe);
        int tokens = 0;
        for (String text : texts) {
            long[] ids = hf.encode(text, false, false).getIds();
            assertArrayEquals(reference.encode(text), ids, text);
            tokens += ids.length;
        }
        assertTrue(tokens > 1000, "compared " + tokens + " tokens");
    }

    @Test
    void qlabsOwnTokenizerReadsTheFileLikeTheRustLibrary() {
        Tokenizer ours = Tokenizer.load(dir.resolve("tiny"));
        assertEquals(bpe.size(), ours.vocabSize());
        List<String> texts = new ArrayList<>(HELD_OUT);
        texts.add("<|im_start|>user\nHi<|im_end|>\n<|endoftext|>");
        texts.addAll(TestCorpus.documents(997, 4_000));
        for (String text : texts) {
            long[] expected = hf.encode(text, false, false).getIds();
            int[] ids = ours.encode(text);
            assertArrayEquals(expected, java.util.Arrays.stream(ids).asLongStream().toArray(), text);
            assertEquals(hf.decode(expected, false), ours.decode(ids, false), text);
            assertEquals(hf.decode(expected, true), ours.decode(ids, true), text);
        }
    }

    @Test
    void trainingTextUsesTheMerges() {
        for (String doc : corpus.subList(0, 3)) { // one each of prose, code and Chinese
            int bytes = doc.getBytes(StandardCharsets.UTF_8).length;
            int tokens = hf.encode(doc, false, false).getIds().length;
            System.out.printf("trained tokenizer (vocab %d): %d bytes -> %d tokens (%.2f bytes/token)%n",
                    bpe.size(), bytes, tokens, (double) bytes / tokens);
            assertTrue(tokens < bytes, tokens + " tokens for " + bytes + " bytes");
        }
    }

    @Test
    void specialTokensAreSingleIdsAfterTheBpeVocabulary() {
        String chat = "<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\nHello!<|im_end|><|endoftext|>";
        long[] ids = hf.encode(chat, false, false).getIds();
        assertEquals(bpe.specialTokenId("<|im_start|>"), ids[0]);
        assertEquals(bpe.tokens().size() + 1, ids[0]);
        assertEquals(bpe.specialTokenId("<|endoftext|>"), ids[ids.length - 1]);
        assertEquals(2, java.util.Arrays.stream(ids).filter(id -> id == bpe.specialTokenId("<|im_end|>")).count());
        assertEquals(chat, hf.decode(ids, false));
        assertEquals("user\nHi there\nassistant\nHello!", hf.decode(ids, true));
    }

    @Test
    void fullQwenVocabularyStopsWhenPairsRunOutAndStillLoads() throws IOException {
        List<String> small = TestCorpus.documents(5, 20_000);
        TrainedBpe full = SyntheticTokenizer.write(dir.resolve("qwen"), 151936, 32768, small);
        assertTrue(full.size() < 151936, "size " + full.size());
        try (HuggingFaceTokenizer tok = load(dir.resolve("qwen"))) {
            BpeByRank reference = new BpeByRank(full);
            for (String text : HELD_OUT) {
                long[] ids = tok.encode(text, false, false).getIds();
                assertArrayEquals(reference.encode(text), ids, text);
                assertEquals(Normalizer.normalize(text, Normalizer.Form.NFC), tok.decode(ids, false), text);
            }
        }
    }

    /**
     * Textbook BPE encoding, written from the trainer's rules only: NFC, split, bytes, then merge the
     * lowest-ranked adjacent pair (leftmost first) until none applies.
     */
    private static final class BpeByRank {
        private final Map<Long, int[]> rankAndResult = new HashMap<>();

        BpeByRank(TrainedBpe bpe) {
            for (int rank = 0; rank < bpe.merges().size(); rank++) {
                TrainedBpe.Merge m = bpe.merges().get(rank);
                rankAndResult.putIfAbsent(((long) m.left() << 32) | m.right(), new int[] {rank, m.result()});
            }
        }

        long[] encode(String text) {
            List<Long> out = new ArrayList<>();
            for (String piece : Qwen2PreTokenizer.split(Normalizer.normalize(text, Normalizer.Form.NFC))) {
                List<Integer> s = new ArrayList<>();
                for (byte b : piece.getBytes(StandardCharsets.UTF_8)) {
                    s.add(ByteLevelAlphabet.idOf(b & 0xFF));
                }
                while (true) {
                    int bestAt = -1;
                    int[] best = null;
                    for (int i = 0; i + 1 < s.size(); i++) {
                        int[] rr = rankAndResult.get(((long) s.get(i) << 32) | s.get(i + 1));
                        if (rr != null && (best == null || rr[0] < best[0])) {
                            best = rr;
                            bestAt = i;
                        }
                    }
                    if (best == null) {
                        break;
                    }
                    s.set(bestAt, best[1]);
                    s.remove(bestAt + 1);
                }
                s.forEach(id -> out.add((long) id));
            }
            return out.stream().mapToLong(Long::longValue).toArray();
        }
    }
}
