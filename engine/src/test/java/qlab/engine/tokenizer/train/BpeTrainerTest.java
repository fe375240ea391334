package qlab.engine.tokenizer.train;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.text.Normalizer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import qlab.engine.QlabException;

class BpeTrainerTest {

    private static final List<String> SPECIALS = BpeTrainer.QWEN_SPECIAL_TOKENS;

    /** Merges as "left right" strings in rank order. */
    private static List<String> mergeStrings(TrainedBpe bpe) {
        List<String> out = new ArrayList<>();
        for (TrainedBpe.Merge m : bpe.merges()) {
            out.add(bpe.tokens().get(m.left()) + " " + bpe.tokens().get(m.right()));
        }
        return out;
    }

    @Test
    void byteLevelAlphabetMatchesQwenIds() {
        assertEquals('!', ByteLevelAlphabet.charOf(0x21));
        assertEquals(0, ByteLevelAlphabet.idOf(0x21));
        assertEquals(93, ByteLevelAlphabet.idOf('~'));
        assertEquals(187, ByteLevelAlphabet.idOf(0xFF));
        assertEquals('\u0100', ByteLevelAlphabet.charOf(0));
        assertEquals(188, ByteLevelAlphabet.idOf(0));
        assertEquals('Ġ', ByteLevelAlphabet.charOf(' '));
        assertEquals(220, ByteLevelAlphabet.idOf(' '));
        assertEquals('Ċ', ByteLevelAlphabet.charOf('\n'));
        assertEquals('\u0143', ByteLevelAlphabet.charOf(0xAD)); // soft hyphen: the last remapped byte
        assertEquals(255, ByteLevelAlphabet.idOf(0xAD));
        boolean[] seen = new boolean[256];
        for (int b = 0; b < 256; b++) {
            assertEquals(b, ByteLevelAlphabet.byteOf(ByteLevelAlphabet.idOf(b)));
            seen[ByteLevelAlphabet.idOf(b)] = true;
        }
        for (boolean s : seen) {
            assertTrue(s);
        }
    }

    @Test
    void preTokenizerSplitsLikeQwen2() {
        assertEquals(List.of("Hello", " world", "'s", " best"), Qwen2PreTokenizer.split("Hello world's best"));
        assertEquals(List.of("I", "'M", " here"), Qwen2PreTokenizer.split("I'M here"));
        // Digits one by one; a run of spaces keeps its last space for the next word.
        assertEquals(List.of("2", "0", "2", "4", "  ", " a"), Qwen2PreTokenizer.split("2024   a"));
        assertEquals(List.of("x", " +=", " ", "1", ";\n", "   ", " return"), Qwen2PreTokenizer.split("x += 1;\n    return"));
        assertEquals(List.of("a", "\n\n", "b", "  \n", "c", "   "), Qwen2PreTokenizer.split("a\n\nb  \nc   "));
        assertEquals(List.of("你好", "，世界", "。"), Qwen2PreTokenizer.split("你好，世界。"));
        // Unicode White_Space: NBSP and the ideographic space behave as spaces, an emoji as punctuation.
        assertEquals(List.of("a", "\u00a0b", "\u3000", "😀"), Qwen2PreTokenizer.split("a\u00a0b\u3000😀"));
        // One non-letter may lead a word; a number is never led.
        assertEquals(List.of("(hello", ")", " $", "1", "0", "0"), Qwen2PreTokenizer.split("(hello) $100"));
    }

    @Test
    void handCheckedMergesWithTieBreak() {
        // One piece "aaabdaaabac". Counts: aa 4 (overlaps count), ab 2, others 1 -> "a a".
        // Then "aa a b d aa a b a c": (aa,a) 2 and (a,b) 2 tie; (a,b) has the smaller left id (a=64 < aa=256).
        // Then "aa ab d aa ab a c": (aa,ab) 2. After that every pair occurs once: stop.
        TrainedBpe bpe = new BpeTrainer(10_000, SPECIALS).train(List.of("aaabdaaabac"));
        assertEquals(List.of("a a", "a b", "aa ab"), mergeStrings(bpe));
        assertEquals(List.of("aa", "ab", "aaab"), bpe.tokens().subList(256, 259));
        assertEquals(259, bpe.tokens().size());
        assertEquals(262, bpe.size());
        assertEquals(259, bpe.specialTokenId("<|endoftext|>"));
        assertEquals(261, bpe.specialTokenId("<|im_end|>"));
    }

    @Test
    void handCheckedMergesWeightPiecesByFrequency() {
        // Pieces: "hug" 1, " hug" 2, " pug" 1, " pun" 1, " bun" 1.
        // u g 4 -> h ug 3 -> {Ġ hug, Ġ p, u n} tie at 2: u=84 is the smallest left id -> then Ġ p (p=79 < hug=257)
        // -> Ġ hug 2 -> every remaining pair occurs once.
        TrainedBpe bpe = new BpeTrainer(10_000, SPECIALS).train(List.of("hug hug hug pug pun bun"));
        assertEquals(List.of("u g", "h ug", "u n", "Ġ p", "Ġ hug"), mergeStrings(bpe));
    }

    @Test
    void stopsAtTheRequestedVocabularySize() {
        TrainedBpe bpe = new BpeTrainer(256 + 1 + SPECIALS.size(), SPECIALS).train(List.of("aaabdaaabac"));
        assertEquals(List.of("a a"), mergeStrings(bpe));
        assertEquals(260, bpe.size());
        List<String> corpus = TestCorpus.documents(7, 40_000);
        TrainedBpe big = new BpeTrainer(1000, SPECIALS).train(corpus);
        assertEquals(1000, big.size());
        assertEquals(1000 - 256 - SPECIALS.size(), big.merges().size());
    }

    @Test
    void resultDependsOnlyOnTheTextsNotTheirOrder() {
        List<String> corpus = TestCorpus.documents(11, 30_000);
        String a = TokenizerJsonWriter.tokenizerJson(new BpeTrainer(1500, SPECIALS).train(corpus));
        String b = TokenizerJsonWriter.tokenizerJson(new BpeTrainer(1500, SPECIALS).train(corpus));
        List<String> shuffled = new ArrayList<>(corpus);
        Collections.shuffle(shuffled, new Random(5));
        String c = TokenizerJsonWriter.tokenizerJson(new BpeTrainer(1500, SPECIALS).train(shuffled));
        assertEquals(a, b);
        assertEquals(a, c);
        assertEquals(SyntheticTokenizer.train(1500, corpus), a);
    }

    @Test
    void nfcNormalizesBeforeCounting() {
        // "e" + combining acute and the precomposed "é" are one piece after NFC: 2 occurrences -> merged.
        TrainedBpe bpe = new BpeTrainer(10_000, SPECIALS).train(List.of("e\u0301", "\u00e9"));
        assertEquals(List.of("Ã ©"), mergeStrings(bpe)); // U+00E9 is bytes C3 A9
    }

    @Test
    void agreesWithANaiveTrainerThatRecountsEveryStep() {
        List<String> corpus = TestCorpus.documents(3, 12_000);
        corpus.add("aaaaaaa bbbbbb aaaa abababab ababa      \n\n\n  \t\t x");
        corpus.add("aaaaaaa bbbbbb aaaa abababab ababa      \n\n\n  \t\t x");
        TrainedBpe bpe = new BpeTrainer(256 + 400 + SPECIALS.size(), SPECIALS).train(corpus);
        List<String> expected = naiveMerges(corpus, 400);
        assertEquals(expected, mergeStrings(bpe));
        assertTrue(expected.size() > 300, "corpus should support many merges, got " + expected.size());
    }

    /** Textbook BPE: recount all pairs after every merge; same counting, tie-break and stopping rules. */
    private static List<String> naiveMerges(List<String> texts, int maxMerges) {
        Map<String, Integer> pieceCounts = new HashMap<>();
        for (String t : texts) {
            for (String p : Qwen2PreTokenizer.split(Normalizer.normalize(t, Normalizer.Form.NFC))) {
                pieceCounts.merge(p, 1, Integer::sum);
            }
        }
        List<String> tokens = new ArrayList<>();
        Map<String, Integer> ids = new HashMap<>();
        for (int id = 0; id < 256; id++) {
            String s = String.valueOf(ByteLevelAlphabet.charOf(ByteLevelAlphabet.byteOf(id)));
            tokens.add(s);
            ids.put(s, id);
        }
        List<List<Integer>> words = new ArrayList<>();
        List<Integer> freqs = new ArrayList<>();
        pieceCounts.forEach((piece, n) -> {
            List<Integer> w = new ArrayList<>();
            for (byte b : piece.getBytes(StandardCharsets.UTF_8)) {
                w.add(ByteLevelAlphabet.idOf(b & 0xFF));
            }
            words.add(w);
            freqs.add(n);
        });
        List<String> merges = new ArrayList<>();
        while (merges.size() < maxMerges) {
            Map<List<Integer>, Long> counts = new HashMap<>();
            for (int i = 0; i < words.size(); i++) {
                List<Integer> w = words.get(i);
                for (int j = 0; j + 1 < w.size(); j++) {
                    counts.merge(List.of(w.get(j), w.get(j + 1)), (long) freqs.get(i), Long::sum);
                }
            }
            List<Integer> best = null;
            long bestCount = 0;
            for (Map.Entry<List<Integer>, Long> e : counts.entrySet()) {
                List<Integer> p = e.getKey();
                long c = e.getValue();
                if (best == null || c > bestCount || (c == bestCount && (p.get(0) < best.get(0)
                        || (p.get(0).equals(best.get(0)) && p.get(1) < best.get(1))))) {
                    best = p;
                    bestCount = c;
                }
            }
            if (best == null || bestCount < BpeTrainer.MIN_PAIR_COUNT) {
                break;
            }
            String merged = tokens.get(best.get(0)) + tokens.get(best.get(1));
            Integer id = ids.get(merged);
            if (id == null) {
                id = tokens.size();
                tokens.add(merged);
                ids.put(merged, id);
            }
            merges.add(tokens.get(best.get(0)) + " " + tokens.get(best.get(1)));
            for (List<Integer> w : words) {
                for (int j = 0; j + 1 < w.size(); j++) {
                    if (w.get(j).equals(best.get(0)) && w.get(j + 1).equals(best.get(1))) {
                        w.set(j, id);
                        w.remove(j + 1);
                    }
                }
            }
        }
        return merges;
    }

    @Test
    void userErrorsAreOneLineQlabExceptions() {
        QlabException small = assertThrows(QlabException.class, () -> new BpeTrainer(258, SPECIALS));
        assertEquals("vocab_size 258 is too small for a byte-level BPE: need at least 259 (256 bytes + 3 special tokens)",
                small.getMessage());
        QlabException surrogate = assertThrows(QlabException.class,
                () -> new BpeTrainer(1000, SPECIALS).train(List.of("ok", "bad \ud800 here")));
        assertEquals("training text 1: unpaired UTF-16 surrogate at char 4", surrogate.getMessage());
        QlabException dup = assertThrows(QlabException.class, () -> new BpeTrainer(1000, List.of("<a>", "<a>")));
        assertTrue(dup.getMessage().contains("duplicate"));
    }
}
