package qlab.engine.tokenizer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The heap-based merge (long words) against the plain scan (the reference rule). */
class BpeMergerTest {
    /** A toy merge table over symbols 0..3 where ties and overlapping pairs are common. */
    private static MergeTable toyMerges() {
        MergeTable t = new MergeTable(16);
        int next = 4;
        int rank = 0;
        // (a,a), (b,a), (a,b) ... then merges of the merged symbols, so chains form.
        int[][] pairs = {{0, 0}, {1, 0}, {0, 1}, {2, 2}, {4, 4}, {4, 0}, {5, 6}, {1, 1}, {3, 0}, {8, 4}, {6, 6}, {4, 1}};
        for (int[] p : pairs) {
            t.put(p[0], p[1], rank++, next++);
        }
        return t;
    }

    @Test
    void heapAndScanAgreeOnRandomWords() {
        BpeMerger merger = new BpeMerger(toyMerges());
        SplittableRandom random = new SplittableRandom(7);
        for (int trial = 0; trial < 5000; trial++) {
            int n = 1 + random.nextInt(trial % 10 == 0 ? 300 : 40);
            int[] word = new int[n];
            for (int i = 0; i < n; i++) {
                word[i] = random.nextInt(4);
            }
            int[] a = word.clone();
            int[] b = word.clone();
            int na = merger.mergeByScan(a, n);
            int nb = merger.mergeWithHeap(b, n);
            assertArrayEquals(Arrays.copyOf(a, na), Arrays.copyOf(b, nb), Arrays.toString(word));
        }
    }

    @Test
    void lowestRankMergesFirstAndLeftmostOnTies() {
        BpeMerger merger = new BpeMerger(toyMerges());
        int[] aaa = {0, 0, 0};
        int n = merger.mergeByScan(aaa, 3);
        // (a,a) at position 0 merges first -> [aa, a] -> (aa,a) = rank 5 -> [9].
        assertArrayEquals(new int[] {9}, Arrays.copyOf(aaa, n));
        int[] heap = {0, 0, 0};
        assertEquals(1, merger.mergeWithHeap(heap, 3));
        assertEquals(9, heap[0]);
    }

    @Test
    void heapAndScanAgreeOnTheRealVocabulary() throws Exception {
        TokenizerOracleTest.load();
        Tokenizer tokenizer = TokenizerOracleTest.tokenizer();
        // Long runs, where the heap is used, compared with the scan on the same symbols.
        BpeModel model = modelOf(tokenizer);
        SplittableRandom random = new SplittableRandom(3);
        String[] units = {"a", "ab", " ", "  ", "\n", "中", "😀", "=", "-", "0", "1", "the ", "é", "\t"};
        for (int trial = 0; trial < 100; trial++) {
            StringBuilder sb = new StringBuilder();
            int len = 1 + random.nextInt(120);
            for (int i = 0; i < len; i++) {
                sb.append(units[random.nextInt(units.length)]);
            }
            byte[] bytes = BpeModel.utf8(sb.toString(), 0, sb.length());
            int[] symbols = new int[bytes.length];
            for (int i = 0; i < bytes.length; i++) {
                symbols[i] = tokenizer.tokenId(String.valueOf(ByteLevelAlphabet.charOf(bytes[i] & 0xFF))).orElseThrow();
            }
            int[] a = symbols.clone();
            int[] b = symbols.clone();
            int na = model.merger().mergeByScan(a, a.length);
            int nb = model.merger().mergeWithHeap(b, b.length);
            assertArrayEquals(Arrays.copyOf(a, na), Arrays.copyOf(b, nb), sb.toString());
        }
    }

    private static BpeModel modelOf(Tokenizer tokenizer) {
        return tokenizer.model();
    }
}
