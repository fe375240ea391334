package qlab.quant.checkpoint;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import qlab.engine.QlabException;
import qlab.engine.model.Greedy;
import qlab.engine.model.KvCache;
import qlab.engine.model.Model;
import qlab.engine.model.ReferenceModel;
import qlab.engine.model.Transformer;
import qlab.engine.safetensors.SafetensorsFile;
import qlab.engine.testing.Fixtures;
import qlab.engine.testing.TestModels;
import qlab.engine.util.WorkerPool;
import qlab.quant.QuantizedMatrix;

class QuantizedCheckpointTest {

    @TempDir
    static Path tmp;

    static WorkerPool pool;

    @BeforeAll
    static void start() {
        pool = new WorkerPool(2);
    }

    @AfterAll
    static void stop() {
        pool.close();
    }

    private static int[] ids(int n, int vocab) {
        return new SplittableRandom(4).ints(n, 0, vocab).toArray();
    }

    @Test
    void aWrittenCheckpointMappedOrReadGivesTheSameLogitsAsInMemory() {
        // untied head, GQA group 3, widths 48/72 that are not multiples of 32 (padded last blocks)
        Model f32 = TestModels.write(TestModels.untiedGroup3(), 3, tmp.resolve("src"));
        for (String planText : new String[] {"q8_0", "q4_0/g64+attn=q8_0", "q4_8+emb=q8_0+head=q4_0/g32", "q2_8+mlp-down=q4_8g64", "b1_0/g32", "bf16"}) {
            QuantPlan plan = QuantPlan.parse(planText);
            Model mem = QuantizedCheckpoint.quantize(f32, plan, null, pool);
            Path file = tmp.resolve(planText.replaceAll("[^a-z0-9_]", "-") + ".safetensors");
            QuantizedCheckpoint.write(mem, Map.of("plan", plan.toString()), file);
            Model mapped = QuantizedCheckpoint.load(file, false, false);
            Model read = QuantizedCheckpoint.load(file, false, true); // each matrix in memory of its own (2 MiB pages)
            int[] x = ids(21, f32.config().vocabSize());
            float[] a = new Transformer(mem, pool).forward(x, new qlab.engine.model.KvCache(mem.config(), 32), true);
            float[] b = new Transformer(mapped, pool).forward(x, new qlab.engine.model.KvCache(mapped.config(), 32), true);
            float[] c = new Transformer(read, pool).forward(x, new qlab.engine.model.KvCache(read.config(), 32), true);
            assertArrayEquals(a, b, planText + ", mapped");
            assertArrayEquals(a, c, planText + ", read");
            // and the fast path on quantized weights agrees with the float64 reference on the same dequantized weights
            double[][] ref = new ReferenceModel(mapped).logits(x);
            int v = f32.config().vocabSize();
            double worst = 0;
            for (int t = 0; t < x.length; t++) {
                for (int j = 0; j < v; j++) {
                    worst = Math.max(worst, Math.abs(b[t * v + j] - ref[t][j]));
                }
            }
            assertTrue(worst < 1e-3, planText + ": fast vs reference " + worst);
            // 64-byte alignment of every matrix within the file
            SafetensorsFile f = SafetensorsFile.open(file);
            long dataStart = 8 + f.headerBytes();
            assertEquals(0, dataStart % 64);
            for (var e : QuantizedCheckpoint.entries(mapped)) {
                assertEquals(0, (dataStart + f.info(e.name()).begin()) % 64, e.name());
            }
        }
    }

    /**
     * Batched decode of a quantized model gives every sequence the greedy tokens single-stream
     * decode gives it, for prompts of different lengths (one long enough for the tiled prefill
     * kernel). Below {@link QuantizedMatrix#TILED_FROM_TOKENS} sequences the block kernels run,
     * bitwise the single-token ones, so the logits are equal bit for bit; from there on the tile
     * runs (tokens in the vector lanes, each weight multiplied before the sum), so the logits
     * agree within float round-off.
     */
    @Test
    void quantizedBatchedDecodeMatchesSingleStreamGreedy() {
        Model f32 = TestModels.write(TestModels.untiedGroup3(), 29, tmp.resolve("batch-src"));
        int vocab = f32.config().vocabSize();
        int[] lengths = {3, 9, 1, 40, 6, 2, 17, 5, 11, 8, 4};
        int tiledBatch = Math.max(QuantizedMatrix.TILED_FROM_TOKENS, lengths.length);
        for (String planText : new String[] {"q4_0", "q2_8+attn=q8_0"}) {
            Model m = QuantizedCheckpoint.quantize(f32, QuantPlan.parse(planText), null, pool);
            Transformer fast = new Transformer(m, pool);
            for (int batch : new int[] {5, tiledBatch}) {
                boolean tiled = batch >= QuantizedMatrix.TILED_FROM_TOKENS;
                int[][] prompts = new int[batch][];
                for (int b = 0; b < batch; b++) {
                    prompts[b] = new SplittableRandom(40 + b).ints(lengths[b % lengths.length], 0, vocab).toArray();
                }
                int steps = 8;
                int[][] single = new int[batch][];
                for (int b = 0; b < batch; b++) {
                    KvCache c = fast.newCache(64);
                    single[b] = Greedy.continueGreedy(fast, c, fast.forward(prompts[b], c, false), vocab, steps);
                }
                KvCache[] caches = new KvCache[batch];
                KvCache[] alone = new KvCache[batch];
                int[] next = new int[batch];
                for (int b = 0; b < batch; b++) {
                    caches[b] = fast.newCache(64);
                    alone[b] = fast.newCache(64);
                    fast.forward(prompts[b], alone[b], false);
                    next[b] = Greedy.argmax(fast.forward(prompts[b], caches[b], false), 0, vocab);
                    assertEquals(single[b][0], next[b], planText + " sequence " + b + " step 0");
                }
                double worst = 0;
                for (int s = 1; s < steps; s++) {
                    float[] logits = fast.decodeBatch(next, caches);
                    for (int b = 0; b < batch; b++) {
                        float[] one = fast.forward(new int[] {next[b]}, alone[b], false);
                        for (int j = 0; j < vocab; j++) {
                            worst = Math.max(worst, Math.abs(one[j] - logits[b * vocab + j]) / (1 + Math.abs(one[j])));
                        }
                        next[b] = Greedy.argmax(logits, b * vocab, vocab);
                        assertEquals(single[b][s], next[b], planText + " batch " + batch + " sequence " + b + " step " + s);
                    }
                }
                String what = planText + " batch " + batch + ": batched vs single-stream logits, worst relative difference";
                System.out.printf("%s %.3g%n", what, worst);
                if (tiled) {
                    assertTrue(worst > 0 && worst < 1e-4, what + " " + worst);
                } else {
                    assertEquals(0.0, worst, what);
                }
            }
        }
    }

    /**
     * With int8 activations ({@code --activations int8}) every product runs the 16-row strip
     * kernel, prefill and batches included, bitwise the scalar int8 reference: batched decode of
     * 11 sequences gives the single-stream logits bit for bit. Against f32 activations the logits
     * differ by the activation rounding (half a step of max|x|/127 per block), less than the
     * weight quantization itself moves them (this small random model amplifies both).
     */
    /** The checkpoint loaded as {@code --activations int8} loads it (the property set for the load only). */
    private static Model loadWithInt8Activations(Path file) {
        String before = System.getProperty(QuantizedMatrix.ACTIVATIONS_PROPERTY);
        System.setProperty(QuantizedMatrix.ACTIVATIONS_PROPERTY, "int8");
        try {
            return QuantizedCheckpoint.load(file);
        } finally {
            if (before == null) {
                System.clearProperty(QuantizedMatrix.ACTIVATIONS_PROPERTY);
            } else {
                System.setProperty(QuantizedMatrix.ACTIVATIONS_PROPERTY, before);
            }
        }
    }

    /**
     * With int8 activations a prompt of 8 tokens or more runs the dequantized tile on the
     * activations rounded to their int8 codes, token-by-token decode runs the strips' integer
     * sums: the same rounded product in another order. The logits of the prompt's last token stay
     * far closer to those of the same tokens decoded one by one than int8 activations are to f32
     * activations, and the greedy next token is the same.
     */
    @Test
    void int8PromptsRunTheTileWithinRoundingOfTokenByTokenDecode() {
        Model f32 = TestModels.write(TestModels.untiedGroup3(), 37, tmp.resolve("int8-prompt-src"));
        int vocab = f32.config().vocabSize();
        Model plain = QuantizedCheckpoint.quantize(f32, QuantPlan.parse("q4_0"), null, pool);
        Path file = tmp.resolve("int8-prompt.safetensors");
        QuantizedCheckpoint.write(plain, Map.of("plan", "q4_0"), file);
        Model m = loadWithInt8Activations(file);
        QuantizedMatrix head = (QuantizedMatrix) m.weights().lmHead();
        assertTrue(head.usesInt8Activations() && head.tiles(QuantizedMatrix.TILED_FROM_TOKENS, true)
                && !head.tiles(QuantizedMatrix.TILED_FROM_TOKENS, false));
        Transformer int8 = new Transformer(m, pool);
        Transformer f32Acts = new Transformer(QuantizedCheckpoint.load(file), pool);
        double worstPath = 0;
        double worstActivations = 0;
        for (int seed = 0; seed < 4; seed++) {
            int[] prompt = new SplittableRandom(90 + seed).ints(12 + 5 * seed, 0, vocab).toArray();
            float[] tiled = int8.forward(prompt, int8.newCache(64), false);
            KvCache cache = int8.newCache(64);
            float[] stepped = null;
            for (int id : prompt) {
                stepped = int8.forward(new int[] {id}, cache, false);
            }
            float[] ref = f32Acts.forward(prompt, f32Acts.newCache(64), false);
            for (int j = 0; j < vocab; j++) {
                worstPath = Math.max(worstPath, Math.abs(tiled[j] - stepped[j]));
                worstActivations = Math.max(worstActivations, Math.abs(stepped[j] - ref[j]));
            }
            assertEquals(Greedy.argmax(stepped, 0, vocab), Greedy.argmax(tiled, 0, vocab), "seed " + seed);
        }
        System.out.printf("int8 prompt: tile vs strips max |logit difference| %.3g, int8 vs f32 activations %.3g%n",
                worstPath, worstActivations);
        assertTrue(worstPath > 0 && worstPath < 0.25 * worstActivations,
                "tile vs strips " + worstPath + ", int8 vs f32 activations " + worstActivations);
    }

    @Test
    void int8ActivationsDecodeBatchedBitwiseAndCloseToF32Activations() {
        Model f32 = TestModels.write(TestModels.untiedGroup3(), 31, tmp.resolve("int8-src"));
        int vocab = f32.config().vocabSize();
        for (String planText : new String[] {"q4_0", "q8_0+mlp-down=q4_8"}) {
            Model plain = QuantizedCheckpoint.quantize(f32, QuantPlan.parse(planText), null, pool);
            Path file = tmp.resolve("int8-" + planText.replaceAll("[^a-z0-9_]", "-") + ".safetensors");
            QuantizedCheckpoint.write(plain, Map.of("plan", planText), file);
            Model m = loadWithInt8Activations(file);
            assertTrue(((QuantizedMatrix) m.weights().lmHead()).usesInt8Activations(), planText);
            Transformer fast = new Transformer(m, pool);
            Transformer f32Acts = new Transformer(QuantizedCheckpoint.load(file), pool);
            int batch = 11;
            KvCache[] caches = new KvCache[batch];
            KvCache[] alone = new KvCache[batch];
            int[] next = new int[batch];
            Transformer unquantized = new Transformer(f32, pool);
            double worstVsF32 = 0;
            double weightEffect = 0;
            for (int b = 0; b < batch; b++) {
                int[] prompt = new SplittableRandom(60 + b).ints(2 + b, 0, vocab).toArray();
                caches[b] = fast.newCache(32);
                alone[b] = fast.newCache(32);
                fast.forward(prompt, alone[b], false);
                float[] logits = fast.forward(prompt, caches[b], false);
                float[] ref = f32Acts.forward(prompt, f32Acts.newCache(32), false);
                float[] exact = unquantized.forward(prompt, unquantized.newCache(32), false);
                for (int j = 0; j < vocab; j++) {
                    worstVsF32 = Math.max(worstVsF32, Math.abs(logits[j] - ref[j]));
                    weightEffect = Math.max(weightEffect, Math.abs(exact[j] - ref[j]));
                }
                next[b] = Greedy.argmax(logits, 0, vocab);
            }
            for (int s = 0; s < 4; s++) {
                float[] logits = fast.decodeBatch(next, caches);
                for (int b = 0; b < batch; b++) {
                    float[] one = fast.forward(new int[] {next[b]}, alone[b], false);
                    for (int j = 0; j < vocab; j++) {
                        assertEquals(Float.floatToIntBits(one[j]), Float.floatToIntBits(logits[b * vocab + j]),
                                planText + " step " + s + " sequence " + b + " logit " + j);
                    }
                    next[b] = Greedy.argmax(logits, b * vocab, vocab);
                }
            }
            System.out.printf("%s: max |logit difference| int8 vs f32 activations %.3g, quantized vs f32 weights %.3g%n",
                    planText, worstVsF32, weightEffect);
            assertTrue(worstVsF32 > 0 && worstVsF32 < 0.5 * weightEffect,
                    planText + ": int8 activations move the logits by " + worstVsF32 + ", the quantized weights by " + weightEffect);
        }
    }

    @Test
    void theFixtureModelsQuantizeDespiteOddWidths() {
        // widths 64 and 176 (tiny-qwen2) and 32 (realvocab): 176 is not a multiple of 128
        Model m = Model.load(Fixtures.oracle().resolve("tiny-qwen2/bf16"));
        for (String f : qlab.quant.Formats.names()) {
            Model q = QuantizedCheckpoint.quantize(m, QuantPlan.parse(f), null, pool);
            float[] logits = new Transformer(q, pool).forward(new int[] {1, 2, 3}, new qlab.engine.model.KvCache(q.config(), 4), true);
            for (float l : logits) {
                assertTrue(Float.isFinite(l), f);
            }
            boolean anyPadded = QuantizedCheckpoint.entries(q).stream().anyMatch(QuantizedCheckpoint.TensorEntry::padded);
            assertEquals(q.config().intermediateSize() % Math.max(1, qlab.quant.Formats.byName(f).groupSize()) != 0
                    && qlab.quant.Formats.byName(f).groupSize() > 1, anyPadded, f);
        }
    }

    @Test
    void plansParseAndPrintCanonically() {
        QuantPlan p = QuantPlan.parse("q4_8+attn=q8_0+emb=q4_0/g64");
        assertEquals("q4_8+attn-qkv=q8_0+attn-o=q8_0+emb=q4_0/g64", p.toString());
        assertEquals(p, QuantPlan.parse(p.toString()));
        assertEquals("q8_0", p.choiceFor("model.layers.3.self_attn.k_proj.weight").format());
        assertEquals("q4_8", p.choiceFor("model.layers.3.mlp.down_proj.weight").format());
        assertTrue(assertThrows(QlabException.class, () -> QuantPlan.parse("q7_k")).getMessage().contains("unknown format \"q7_k\""));
        assertTrue(assertThrows(QlabException.class, () -> QuantPlan.parse("q4_8/g32")).getMessage().contains("group size 32"));
        assertTrue(assertThrows(QlabException.class, () -> QuantPlan.parse("q4_0+ffn=q8_0")).getMessage().contains("unknown tensor selector \"ffn\""));
        assertTrue(assertThrows(QlabException.class, () -> QuantPlan.parse("q4_0+attn")).getMessage().contains("TENSORS=FORMAT"));
    }

    @Test
    void corruptOrTruncatedFilesAreClearErrors() throws IOException {
        Model f32 = TestModels.write(TestModels.oneKvHead(), 5, tmp.resolve("src2"));
        Path file = tmp.resolve("ok.safetensors");
        QuantizedCheckpoint.write(QuantizedCheckpoint.quantize(f32, QuantPlan.parse("q4_0"), null, pool), Map.of(), file);
        byte[] all = Files.readAllBytes(file);
        Path cut = tmp.resolve("cut.safetensors");
        Files.write(cut, java.util.Arrays.copyOf(all, all.length - 300));
        String msg = assertThrows(QlabException.class, () -> QuantizedCheckpoint.load(cut)).getMessage();
        assertTrue(msg.contains("cut.safetensors") && msg.contains("out of range"), msg);
        // a metadata entry that names a format that does not exist
        String text = new String(all, java.nio.charset.StandardCharsets.ISO_8859_1).replaceFirst("\\\\\"format\\\\\":\\\\\"q4_0\\\\\"", "\\\\\"format\\\\\":\\\\\"q4_x\\\\\"");
        Path bad = tmp.resolve("bad.safetensors");
        Files.write(bad, text.getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
        msg = assertThrows(QlabException.class, () -> QuantizedCheckpoint.load(bad)).getMessage();
        assertTrue(msg.contains("unknown format \"q4_x\"") && msg.contains("bad.safetensors"), msg);
        // an ordinary model file is not a quantized checkpoint
        msg = assertThrows(QlabException.class, () -> QuantizedCheckpoint.load(tmp.resolve("src2/model.safetensors"))).getMessage();
        assertTrue(msg.contains("not a qlab quantized checkpoint"), msg);
    }
}
