package qlab.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import qlab.engine.eval.ScoringMode;
import qlab.engine.eval.UnigramModel;
import qlab.engine.model.Model;
import qlab.engine.tensor.Matrix;
import qlab.engine.tokenizer.Tokenizer;
import qlab.engine.train.TrainRun;
import qlab.quant.QuantizedMatrix;

/** ppl, kl, calibrate, quantize and bench-batch through the command line, on a generated model with a tokenizer. */
class MeasurementCommandsTest {

    @TempDir
    static Path tmp;

    static Path model;
    static Path text;

    @BeforeAll
    static void generate() {
        model = tmp.resolve("tiny");
        assertEquals(0, CliRun.of("gen", "--preset", "tiny", "--seed", "4", "--out", model.toString()).exit());
        text = Path.of(System.getProperty("qlab.home"), "datasets", "eval", "en-prose.txt");
    }

    private static JsonNode json(CliRun r) throws Exception {
        assertEquals(0, r.exit(), r.err());
        return new ObjectMapper().readTree(r.out());
    }

    @Test
    void quantizeCalibrateAndScore() throws Exception {
        Path calib = Path.of(System.getProperty("qlab.home"), "datasets", "calib", "en-prose.txt");
        Path im = tmp.resolve("tiny.imatrix");
        assertEquals(0, CliRun.of("calibrate", "--model", model.toString(), "--text", calib.toString(), "--max-tokens", "600",
                "--ctx", "128", "--out", im.toString()).exit());
        Path q = tmp.resolve("tiny.q4_0.safetensors");
        CliRun qr = CliRun.of("quantize", "--model", model.toString(), "--format", "q4_0", "--attn", "q8_0", "--imatrix",
                im.toString(), "--out", q.toString());
        assertEquals(0, qr.exit(), qr.err());
        assertTrue(qr.err().contains("q4_0+attn-qkv=q8_0+attn-o=q8_0"), qr.err());
        JsonNode inspect = json(CliRun.of("inspect", "--model", q.toString(), "--json"));
        assertTrue(inspect.get("bits_per_weight").asDouble() > 4.5 && inspect.get("bits_per_weight").asDouble() < 8.5);
        assertEquals(ModelHashOf.tiny(model, im), inspect.get("provenance").get("imatrix").asText());

        JsonNode ppl = json(CliRun.of("ppl", "--model", q.toString(), "--text", text.toString(), "--ctx", "128",
                "--max-tokens", "512", "--json"));
        assertEquals(4 * 63, ppl.get("tokens_scored").asInt());
        assertTrue(ppl.get("ppl").asDouble() > 1 && ppl.get("ppl_se").asDouble() > 0);

        String cache = tmp.resolve("cache").toString();
        JsonNode kl = json(CliRun.of("kl", "--base", model.toString(), "--model", q.toString(), "--text", text.toString(),
                "--ctx", "128", "--max-tokens", "512", "--cache", cache, "--json"));
        assertTrue(kl.get("kl").get("mean").asDouble() > 0, kl.toString());
        assertEquals(false, kl.get("baseline_reused").asBoolean());
        // same tokens, same model, two processes of work: equal up to float round-off
        assertEquals(ppl.get("ppl").asDouble(), kl.get("ppl").asDouble(), 1e-6 * ppl.get("ppl").asDouble());
        JsonNode again = json(CliRun.of("kl", "--base", model.toString(), "--model", q.toString(), "--text", text.toString(),
                "--ctx", "128", "--max-tokens", "512", "--cache", cache, "--json"));
        assertEquals(true, again.get("baseline_reused").asBoolean());
        assertEquals(kl.get("kl").get("mean").asDouble(), again.get("kl").get("mean").asDouble(), 0.0);

        // int8 activations: the same windows, a slightly different model (activations rounded per block)
        JsonNode int8 = json(CliRun.of("ppl", "--model", q.toString(), "--text", text.toString(), "--ctx", "128",
                "--max-tokens", "512", "--activations", "int8", "--json"));
        double rel = Math.abs(int8.get("ppl").asDouble() / ppl.get("ppl").asDouble() - 1);
        assertTrue(rel > 0 && rel < 0.05, "int8 vs f32 activations, relative perplexity difference " + rel);
        JsonNode back = json(CliRun.of("ppl", "--model", q.toString(), "--text", text.toString(), "--ctx", "128",
                "--max-tokens", "512", "--json"));
        assertEquals(ppl.get("ppl").asDouble(), back.get("ppl").asDouble(), 0.0, "f32 again after an int8 run in the same JVM");
    }

    @Test
    void pplComparesWithAUnigramModelOnTheSameTokens() throws Exception {
        Path train = Path.of(System.getProperty("qlab.home"), "datasets", "calib", "en-prose.txt");
        Path second = tmp.resolve("second.txt");
        Files.writeString(second, "A second file of training text.\nIts last line is held out.\n");
        JsonNode j = json(CliRun.of("ppl", "--model", model.toString(), "--text", text.toString(), "--ctx", "128",
                "--max-tokens", "300", "--score", "all", "--unigram", train.toString(), second.toString(), "--json"));
        JsonNode u = j.get("unigram");
        assertEquals(2 * 127 + 43, j.get("tokens_scored").asInt());
        assertEquals(j.get("tokens_scored").asInt(), u.get("tokens_scored").asInt());
        Tokenizer tok = Tokenizer.load(model);
        assertEquals(tok.vocabSize(), u.get("vocab").asInt());
        int[] counted = TrainRun.trainingTokens(tok, List.of(train, second), model);
        assertEquals(counted.length, u.get("tokens_counted").asLong());
        int[] ids = Arrays.copyOf(tok.encode(Files.readString(text)), 300);
        double want = UnigramModel.fit(counted, tok.vocabSize()).perplexity(ids, 128, ScoringMode.ALL).ppl();
        assertEquals(want, u.get("ppl").asDouble(), 1e-9 * want);
        assertEquals(j.get("ppl").asDouble() / want, j.get("ppl_over_unigram").asDouble(), 1e-9);

        CliRun plain = CliRun.of("ppl", "--model", model.toString(), "--text", text.toString(), "--ctx", "128",
                "--max-tokens", "300", "--score", "all", "--unigram", train.toString());
        assertEquals(0, plain.exit(), plain.err());
        assertTrue(plain.out().contains("unigram PPL = ") && plain.out().contains("over the same 297 tokens"), plain.out());

        CliRun missing = CliRun.of("ppl", "--model", model.toString(), "--text", text.toString(), "--unigram",
                tmp.resolve("absent.txt").toString());
        assertEquals(2, missing.exit());
        assertEquals(1, missing.err().strip().lines().count(), missing.err());
        assertTrue(missing.err().contains("absent.txt"), missing.err());
    }

    @Test
    void klReadsItsReferenceInPlace() {
        // kl's --base: matrices read from the file's mapping in their stored element type, not widened onto the heap
        Model base = Models.openMapped(model);
        for (Map.Entry<String, Matrix> e : base.weights().matrices().entrySet()) {
            assertTrue(e.getValue() instanceof QuantizedMatrix, e.getKey());
            assertEquals("bf16", e.getValue().format(), e.getKey());
        }
    }

    @Test
    void badInputIsOneLine() throws Exception {
        Path empty = tmp.resolve("empty.txt");
        Files.writeString(empty, "");
        Path shortText = tmp.resolve("short.txt");
        Files.writeString(shortText, "Too short for a window.");
        Path other = tmp.resolve("other");
        assertEquals(0, CliRun.of("gen", "--preset", "small", "--seed", "1", "--out", other.toString(), "--no-tokenizer").exit());
        Path otherIm = tmp.resolve("other.imatrix");
        Path ids = tmp.resolve("ids.txt");
        Files.writeString(ids, "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20");
        assertEquals(0, CliRun.of("calibrate", "--model", other.toString(), "--ids", ids.toString(), "--ctx", "8", "--out",
                otherIm.toString()).exit());
        String[][] cases = {
            {"ppl", "--model", model.toString(), "--text", empty.toString()},
            {"ppl", "--model", model.toString(), "--text", shortText.toString(), "--ctx", "512"},
            {"quantize", "--model", model.toString(), "--format", "q4_0", "--imatrix", otherIm.toString(), "--out", tmp.resolve("x").toString()},
            {"quantize", "--model", model.toString(), "--format", "q7_k", "--out", tmp.resolve("y").toString()},
            {"quantize", "--model", model.toString(), "--format", "Q4_K_M"},
            {"bench-batch", "--model", model.toString(), "--batch", "0"},
            {"bench", "--model", model.toString(), "--activations", "int4"},
            {"ppl", "--model", model.toString(), "--text", text.toString(), "--threads", "two"},
        };
        String[] expect = {"the text is empty", "too short for one window", "different model", "unknown format \"q7_k\"",
            "--out is required", "--batch",
            "--activations", "--threads"};
        for (int i = 0; i < cases.length; i++) {
            CliRun r = CliRun.of(cases[i]);
            assertEquals(2, r.exit(), String.join(" ", cases[i]) + ": " + r.err());
            assertEquals(1, r.err().strip().lines().count(), r.err());
            assertTrue(r.err().contains(expect[i]), r.err());
        }
    }

    @Test
    void quantizeExplainsALlamaRecipe() {
        CliRun r = CliRun.of("quantize", "--model", model.toString(), "--format", "Q4_K_M", "--explain");
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().contains("model.layers.0.mlp.down_proj.weight"), r.out());
        assertTrue(r.out().contains("Q4_K_M: ") && r.out().contains("bits per weight"), r.out());
    }

    @Test
    void benchBatchReportsEveryBatchSize() throws Exception {
        JsonNode j = json(CliRun.of("bench-batch", "--model", model.toString(), "--batch", "1,3", "--steps", "4", "--reps", "1",
                "--prompt-tokens", "5", "--threads", "1", "--json"));
        assertEquals(2, j.get("results").size());
        assertEquals(3, j.get("results").get(1).get("batch").asInt());
        assertTrue(j.get("results").get(1).get("tps").asDouble() > 0);
        assertTrue(j.get("results").get(0).get("ms_per_step").asDouble() > 0);
    }

    /** The content hash quantize records for the importance matrix. */
    static final class ModelHashOf {
        static String tiny(Path model, Path im) {
            return qlab.engine.model.ModelHash.of(im);
        }
    }
}
