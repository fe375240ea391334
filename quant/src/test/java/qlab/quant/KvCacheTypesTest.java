package qlab.quant;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import qlab.engine.QlabException;
import qlab.engine.model.KvCache;
import qlab.engine.model.KvType;
import qlab.engine.model.KvTypes;
import qlab.engine.model.Model;
import qlab.engine.model.ModelConfig;
import qlab.engine.model.ReferenceModel;
import qlab.engine.model.RopeScaling;
import qlab.engine.model.Transformer;
import qlab.engine.testing.TestModels;
import qlab.engine.util.WorkerPool;
import qlab.quant.ggml.GgmlType;

/**
 * The KV cache's types: each stores what its format's reference quantizer gives, in ggml's block
 * sizes; tiled attention over an encoded cache agrees with the float64 reference that rounds K and
 * V the same way, at every type and family, across many KV tiles; batched, chunked and sequential
 * runs give the same bits.
 */
class KvCacheTypesTest {

    private static WorkerPool pool;

    @TempDir
    static Path tmp;

    @BeforeAll
    static void start() {
        pool = new WorkerPool(2);
    }

    @AfterAll
    static void stop() {
        pool.close();
    }

    /** Head dim 32 (block types need a multiple of 32) in each family. */
    static ModelConfig family(String name) {
        return switch (name) {
            case "qwen2" -> TestModels.oneKvHead();
            case "llama" -> ModelConfig.llama(64, 96, 2, 4, 2, 32, 320, 1e-5, 500_000.0, RopeScaling.NONE,
                    false, 8192, "bfloat16", false, false);
            case "qwen3" -> ModelConfig.qwen3(64, 96, 2, 4, 2, 32, 300, 1e-6, 1_000_000.0, RopeScaling.NONE, true,
                    8192, "bfloat16", false);
            default -> throw new IllegalArgumentException(name);
        };
    }

    static Stream<Arguments> typesAndFamilies() {
        List<Arguments> out = new ArrayList<>();
        for (String f : List.of("qwen2", "llama", "qwen3")) {
            for (String t : KvFormats.NAMES) {
                out.add(Arguments.of(f, t));
            }
        }
        return out.stream();
    }

    @Test
    void eachTypeStoresItsFormatsBlocks() {
        SplittableRandom r = new SplittableRandom(1);
        for (String name : KvFormats.NAMES) {
            KvType t = KvFormats.named(name);
            assertEquals(name, t.name());
            if (t == KvType.F32) {
                assertEquals(4 * 64, t.bytesPerRow(64));
                continue;
            }
            QuantFormat f = Formats.byName(name);
            GgmlType g = f.ggml().orElseThrow().type();
            assertEquals(g.blockSize, t.blockSize(), name);
            for (int n : new int[] {32, 64, 128}) {
                if (n % g.blockSize != 0) {
                    continue;
                }
                assertEquals(g.rowBytes(n), t.bytesPerRow(n), name + " bytes of " + n + " values, as ggml stores them");
                float[] row = randomRow(r, n);
                byte[] mine = new byte[(int) t.bytesPerRow(n)];
                t.encode(row, 0, n, mine, 0);
                byte[] direct = new byte[(int) f.bytesPerRow(n)];
                f.quantizeRow(row, 0, n, null, MemorySegment.ofArray(direct), 0);
                assertArrayEquals(direct, mine, name + ": the format's reference quantizer");
                float[] back = new float[n];
                t.decode(mine, 0, n, back, 0);
                float[] want = new float[n];
                f.dequantizeRow(MemorySegment.ofArray(direct), 0, n, want, 0);
                assertArrayEquals(want, back, name);
                float[] rounded = row.clone();
                t.round(rounded, 0, n);
                assertArrayEquals(want, rounded, name + ": round is encode then decode");
            }
        }
    }

    private static float[] randomRow(SplittableRandom r, int n) {
        float[] a = new float[n];
        for (int i = 0; i < n; i++) {
            a[i] = (float) r.nextGaussian();
        }
        return a;
    }

    @Test
    void unknownTypesAndHeadDimsTheBlocksDoNotDivideAreOneLineErrors() {
        QlabException e = assertThrows(QlabException.class, () -> KvFormats.named("q4_k"));
        assertTrue(e.getMessage().contains("q4_k") && e.getMessage().contains("q8_0") && !e.getMessage().contains("\n"),
                e.getMessage());
        assertEquals("q8_0", KvFormats.named("Q8_0").name());
        ModelConfig hd8 = TestModels.untiedGroup3();
        QlabException d = assertThrows(QlabException.class, () -> new KvCache(hd8, 16, KvFormats.of("q4_0", "f32")));
        assertTrue(d.getMessage().contains("head_dim 8"), d.getMessage());
        new KvCache(hd8, 16, KvFormats.of("f16", "bf16")); // float types take any head dim
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("typesAndFamilies")
    void cacheMemoryFollowsTheType(String family, String type) {
        ModelConfig c = family(family);
        KvTypes types = KvFormats.of(type, type);
        KvCache cache = new KvCache(c, 100, types);
        assertEquals(100L * c.numLayers() * types.bytesPerTokenPerLayer(c), cache.byteSize());
        if (!type.equals("f32")) {
            assertTrue(cache.byteSize() < new KvCache(c, 100).byteSize(), type + " is smaller than f32");
        }
    }

    /**
     * Logits through a cache of each type, 8-position KV tiles (so 256 tokens cross 32 tiles),
     * against the float64 reference whose K and V are rounded to the same type, over the first 32
     * positions (one tile of 32) and over all 256. The fast path's keys differ from the
     * reference's in the last float bits, which now and then moves a value across a rounding
     * boundary of the type (for iq4_nl, a block's whole scale choice): a jump of one step where
     * the type itself moves every value by up to half a step. So the bound is the mean |difference|
     * against the mean change the type itself makes to the reference's logits: a small share of
     * it, the same at 256 positions as at 32, and at f32 within float rounding.
     */
    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("typesAndFamilies")
    void tiledAttentionOverEachTypeMatchesTheReference(String family, String type) {
        KvTypes types = KvFormats.of(type, type);
        Model model = TestModels.writeWithLogitScale(family(family), 7, 14, tmp.resolve("ref-" + family));
        int[] ids = new SplittableRandom(3).ints(256, 0, model.config().vocabSize()).toArray();
        double[][] typed = new ReferenceModel(model, types).logits(ids);
        double[][] exact = types.equals(KvTypes.F32) ? typed : new ReferenceModel(model).logits(ids);
        for (int n : new int[] {32, 256}) {
            float[] fast = forward(new Transformer(model, pool, types, n == 32 ? 32 : 8), Arrays.copyOf(ids, n));
            double err = meanAbs(fast, typed, n);
            double effect = meanAbs(typed, exact, n);
            System.out.printf("%s %s, %d positions: mean |fast - reference| %.3g, the type's own effect %.3g%n",
                    family, type, n, err, effect);
            assertTrue(err <= 0.05 * effect + 5e-6, family + " " + type + " at " + n + " positions: error " + err
                    + " against the type's effect " + effect);
        }
    }

    /** Keys as q8_0 and values as q4_0 at once: each side rounds with its own type. */
    @Test
    void keysAndValuesTakeTheirOwnTypes() {
        KvTypes types = KvFormats.of("q8_0", "q4_0");
        Model model = TestModels.writeWithLogitScale(family("llama"), 7, 14, tmp.resolve("mixed"));
        int[] ids = new SplittableRandom(4).ints(70, 0, model.config().vocabSize()).toArray();
        double right = errors(new Transformer(model, pool, types, 16), new ReferenceModel(model, types), ids)[0];
        double swapped = errors(new Transformer(model, pool, types, 16),
                new ReferenceModel(model, KvFormats.of("q4_0", "q8_0")), ids)[0];
        assertTrue(swapped > 10 * right, "right " + right + ", swapped " + swapped);
    }

    /** {mean, max} of |fast - reference| over every logit. */
    private static double[] errors(Transformer fast, ReferenceModel ref, int[] ids) {
        float[] got = forward(fast, ids);
        double[][] want = ref.logits(ids);
        int vocab = fast.config().vocabSize();
        double worst = 0;
        for (int t = 0; t < ids.length; t++) {
            for (int j = 0; j < vocab; j++) {
                worst = Math.max(worst, Math.abs(got[t * vocab + j] - want[t][j]));
            }
        }
        return new double[] {meanAbs(got, want, ids.length), worst};
    }

    private static float[] forward(Transformer fast, int[] ids) {
        return fast.forward(ids, fast.newCache(ids.length), true);
    }

    /** Mean |a - b| over the first n positions' logits. */
    private static double meanAbs(float[] a, double[][] b, int n) {
        int vocab = b[0].length;
        double sum = 0;
        for (int t = 0; t < n; t++) {
            for (int j = 0; j < vocab; j++) {
                sum += Math.abs(a[t * vocab + j] - b[t][j]);
            }
        }
        return sum / ((double) n * vocab);
    }

    private static double meanAbs(double[][] a, double[][] b, int n) {
        int vocab = b[0].length;
        double sum = 0;
        for (int t = 0; t < n; t++) {
            for (int j = 0; j < vocab; j++) {
                sum += Math.abs(a[t][j] - b[t][j]);
            }
        }
        return sum / ((double) n * vocab);
    }

    /**
     * One prompt in one pass, token by token, and in ragged chunks: the same logits within float
     * rounding at every type; B sequences decoding in lock-step: the same bits as each alone.
     */
    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("typesAndFamilies")
    void chunkingsAndBatchesGiveTheSameBits(String family, String type) {
        KvTypes types = KvFormats.of(type, type);
        Model model = TestModels.write(family(family), 11, tmp.resolve("bits-" + family));
        Transformer fast = new Transformer(model, pool, types, 8);
        int vocab = model.config().vocabSize();
        int[] ids = new SplittableRandom(5).ints(41, 0, vocab).toArray();
        float[] whole = fast.forward(ids, fast.newCache(48), true);
        Transformer f32 = new Transformer(model, pool);
        float[] exact = f32.forward(ids, f32.newCache(48), true);
        double effect = 0;
        for (int i = 0; i < whole.length; i++) {
            effect += Math.abs(whole[i] - exact[i]) / whole.length;
        }
        for (int[] chunks : new int[][] {{1, 1, 1, 38}, {17, 9, 15}, {40, 1}}) {
            KvCache cache = fast.newCache(48);
            float[] all = new float[ids.length * vocab];
            int at = 0;
            for (int len : chunks) {
                float[] l = fast.forward(Arrays.copyOfRange(ids, at, at + len), cache, true);
                System.arraycopy(l, 0, all, at * vocab, l.length);
                at += len;
            }
            // One-row and many-row products round differently (as in FastVsReferenceTest), and a
            // key that differs in its last bit can round to the next step of the type: measured
            // against what the type itself changes, as in the reference test above.
            double diff = 0;
            for (int i = 0; i < all.length; i++) {
                diff += Math.abs(all[i] - whole[i]) / all.length;
            }
            assertTrue(diff <= 0.05 * effect + 1e-6, family + " " + type + " chunks " + Arrays.toString(chunks)
                    + ": mean difference " + diff + ", the type's effect " + effect);
        }
        // three sequences of different lengths decoding in lock-step = each decoding alone
        int[][] prompts = {Arrays.copyOf(ids, 9), Arrays.copyOfRange(ids, 3, 30), Arrays.copyOfRange(ids, 10, 12)};
        KvCache[] caches = new KvCache[3];
        int[] next = new int[3];
        for (int b = 0; b < 3; b++) {
            caches[b] = fast.newCache(48);
            fast.forward(prompts[b], caches[b], false);
            next[b] = ids[b];
        }
        float[] batched = fast.decodeBatch(next, caches);
        for (int b = 0; b < 3; b++) {
            KvCache alone = fast.newCache(48);
            fast.forward(prompts[b], alone, false);
            float[] single = fast.forward(new int[] {next[b]}, alone, false);
            assertArrayEquals(single, Arrays.copyOfRange(batched, b * vocab, (b + 1) * vocab), family + " " + type + " row " + b);
        }
    }

    /** f32 through one tile is the plain softmax; tiles of 8 (the online softmax) stay within float rounding of it. */
    @Test
    void theOnlineSoftmaxAgreesWithThePlainOne() {
        Model model = TestModels.write(family("qwen3"), 13, tmp.resolve("online"));
        int[] ids = new SplittableRandom(6).ints(100, 0, model.config().vocabSize()).toArray();
        Transformer plain = new Transformer(model, pool);
        Transformer tiled = new Transformer(model, pool, KvTypes.F32, 8);
        float[] a = plain.forward(ids, plain.newCache(100), true);
        float[] b = tiled.forward(ids, tiled.newCache(100), true);
        double worst = 0;
        for (int i = 0; i < a.length; i++) {
            worst = Math.max(worst, Math.abs(a[i] - b[i]));
        }
        assertTrue(worst > 0 && worst < 1e-5, "online vs plain softmax: " + worst);
        // the first 8 positions lie in one tile in both: the same bits
        int vocab = model.config().vocabSize();
        assertArrayEquals(Arrays.copyOf(a, 8 * vocab), Arrays.copyOf(b, 8 * vocab));
    }
}
