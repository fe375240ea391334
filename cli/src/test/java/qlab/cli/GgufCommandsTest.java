package qlab.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import qlab.engine.testing.GgmlFixtures;
import qlab.quant.imatrix.ImportanceMatrix;
import qlab.quant.imatrix.LlamaImatrix;

/** The commands on llama.cpp's files: GGUF models as --model, importance matrices in its formats. */
class GgufCommandsTest {

    @TempDir
    Path tmp;

    @Test
    void logitsOfTheF16GgufEqualThoseOfTheSafetensorsDirectory() throws Exception {
        Path a = tmp.resolve("a.f32");
        Path b = tmp.resolve("b.f32");
        String ids = "3077,879,68,547,282,258,1899,4094";
        CliRun ra = CliRun.of("logits", "--model", GgmlFixtures.model("tiny-k.f16.gguf").toString(), "--ids", ids,
                "--out", a.toString(), "--threads", "1");
        CliRun rb = CliRun.of("logits", "--model", GgmlFixtures.model("tiny-k").toString(), "--ids", ids,
                "--out", b.toString(), "--threads", "1");
        assertEquals(0, ra.exit(), ra.err());
        assertEquals(0, rb.exit(), rb.err());
        assertArrayEquals(Files.readAllBytes(b), Files.readAllBytes(a));
    }

    @Test
    void calibrateWritesEachFormatAndQuantizeReadsEach() throws Exception {
        Path text = write("calib.txt", Files.readString(GgmlFixtures.home().resolve("datasets/calib/en-prose.txt")));
        ImportanceMatrix first = null;
        for (String format : new String[] {"qlab", "gguf", "dat"}) {
            Path im = tmp.resolve("tiny." + format + ".imatrix");
            CliRun c = CliRun.of("calibrate", "--model", GgmlFixtures.model("tiny-k.f16.gguf").toString(), "--text",
                    text.toString(), "--max-tokens", "96", "--ctx", "32", "--format", format, "--out", im.toString(),
                    "--threads", "1");
            assertEquals(0, c.exit(), c.err());
            if (!format.equals("qlab")) {
                Path named = tmp.resolve("tiny." + format);
                Files.move(im, named);
                im = named;
            }
            ImportanceMatrix m = LlamaImatrix.load(im);
            if (first == null) {
                first = m;
            } else {
                for (var e : first.values().entrySet()) {
                    assertArrayEquals(e.getValue(), m.forMatrix(e.getKey()), format + " " + e.getKey());
                }
            }
            Path q = tmp.resolve("q." + format + ".safetensors");
            CliRun r = CliRun.of("quantize", "--model", GgmlFixtures.model("tiny-k").toString(), "--format", "q4_0",
                    "--imatrix", im.toString(), "--out", q.toString(), "--threads", "1");
            assertEquals(0, r.exit(), r.err());
        }
        Path llama = GgmlFixtures.dir().resolve("imatrix/tiny-k.imatrix.dat");
        CliRun r = CliRun.of("quantize", "--model", GgmlFixtures.model("tiny-k.f16.gguf").toString(), "--format", "q4_0",
                "--imatrix", llama.toString(), "--out", tmp.resolve("q.llama.safetensors").toString(), "--threads", "1");
        assertEquals(0, r.exit(), r.err());
    }

    @Test
    void inspectAndTokenizeTakeAGguf() throws Exception {
        CliRun r = CliRun.of("inspect", "--model", GgmlFixtures.model("tiny-k.q8_0.gguf").toString(), "--json");
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().contains("\"Q8_0\" : 15") || r.out().contains("\"Q8_0\":15"), r.out());
        Path in = write("in.jsonl", "{\"text\":\"<|im_start|>hello world\"}\n");
        Path out = tmp.resolve("out.jsonl");
        Path outJson = tmp.resolve("out2.jsonl");
        assertEquals(0, CliRun.of("tokenize", "--model", GgmlFixtures.model("tiny-k.f16.gguf").toString(), "--jsonl",
                in.toString(), "--out", out.toString()).exit());
        assertEquals(0, CliRun.of("tokenize", "--model", GgmlFixtures.model("tiny-k").toString(), "--jsonl",
                in.toString(), "--out", outJson.toString()).exit());
        assertEquals(Files.readString(outJson), Files.readString(out));
    }

    @Test
    void aMalformedGgufIsOneLineAndANonZeroExit() throws Exception {
        byte[] b = Files.readAllBytes(GgmlFixtures.model("tiny-k.f16.gguf"));
        Path cut = tmp.resolve("cut.gguf");
        Files.write(cut, Arrays.copyOf(b, b.length / 2));
        for (String cmd : new String[] {"inspect", "ppl"}) {
            CliRun r = cmd.equals("ppl")
                    ? CliRun.of("ppl", "--model", cut.toString(), "--ctx", "4", "--ids", write("ids.txt", "1 2 3 4 5").toString())
                    : CliRun.of("inspect", "--model", cut.toString());
            assertEquals(2, r.exit(), r.err());
            String err = r.err().strip();
            assertEquals(1, err.lines().count(), err);
            assertTrue(err.contains(cut.toString()) && err.contains("past the end"), err);
            assertFalse(err.contains("\tat "), err);
        }
    }

    @Test
    void exportWritesAGgufFromADirectoryOrAGgufAndRefusesWhatGgmlCannotHold() throws Exception {
        Path fromDir = tmp.resolve("a.gguf");
        Path fromGguf = tmp.resolve("b.gguf");
        CliRun a = CliRun.of("export", "--model", GgmlFixtures.model("tiny-k").toString(), "--format", "q8_0",
                "--out", fromDir.toString(), "--threads", "1");
        assertEquals(0, a.exit(), a.err());
        assertTrue(a.err().contains("Q8_0=15"), a.err());
        CliRun b = CliRun.of("export", "--model", GgmlFixtures.model("tiny-k.f16.gguf").toString(), "--format", "q8_0",
                "--imatrix", GgmlFixtures.dir().resolve("imatrix/tiny-k.imatrix.gguf").toString(),
                "--out", fromGguf.toString(), "--threads", "1");
        assertEquals(0, b.exit(), b.err());
        var fa = qlab.quant.checkpoint.GgufCheckpoint.open(fromDir);
        var fb = qlab.quant.checkpoint.GgufCheckpoint.open(fromGguf);
        for (String name : fa.tensors().keySet()) {
            assertEquals(-1, fa.bytes(name).mismatch(fb.bytes(name)), name); // Q8_0 ignores importance, as ggml's does
        }
        CliRun r = CliRun.of("export", "--model", GgmlFixtures.model("tiny-k").toString(), "--format", "q4_8",
                "--out", tmp.resolve("c.gguf").toString());
        assertEquals(2, r.exit());
        assertEquals(1, r.err().strip().lines().count(), r.err());
        assertTrue(r.err().contains("formats that export: "), r.err());
    }

    /**
     * A model with fewer tokens than embedding rows (as the large presets, Qwen2.5 and Qwen3 are):
     * export pads the token list to the rows with the converter's placeholders and carries
     * generation_config.json's sampling defaults; exporting that GGUF again keeps both.
     */
    @Test
    void exportOfAModelWithFewerTokensThanRowsHasOneTokenPerRowAndItsSamplingDefaults() throws Exception {
        Path model = tmp.resolve("tiny-qwen3");
        assertEquals(0, CliRun.of("gen", "--preset", "tiny-qwen3", "--seed", "1", "--out", model.toString()).exit());
        // the tiny presets' tokenizers fill their 4,096 rows: put a smaller one in its place
        qlab.engine.tokenizer.train.SyntheticTokenizer.write(model, 400, 32768,
                List.of("The river runs past the mill and the old stone bridge.", "Numbers 1, 22 and 333; code: f(x) = x * 2"));
        int tokens = qlab.engine.tokenizer.Tokenizer.load(model).vocabSize();
        assertTrue(tokens < 4096, "the preset's tokenizer has " + tokens + " tokens");
        Path first = tmp.resolve("first.gguf");
        Path second = tmp.resolve("second.gguf");
        CliRun a = CliRun.of("export", "--model", model.toString(), "--format", "q4_0+mlp-down=f16", "--out", first.toString(),
                "--threads", "1");
        assertEquals(0, a.exit(), a.err());
        CliRun b = CliRun.of("export", "--model", first.toString(), "--format", "q8_0+mlp-down=f16", "--out", second.toString(),
                "--threads", "1");
        assertEquals(0, b.exit(), b.err());
        for (Path p : List.of(first, second)) {
            var f = qlab.quant.checkpoint.GgufCheckpoint.open(p);
            List<String> list = f.strings(qlab.engine.gguf.GgufTokenizer.TOKENS);
            assertEquals(4096, f.tensor("token_embd.weight").ne()[1], p.toString());
            assertEquals(4096, list.size(), p.toString());
            assertEquals("[PAD" + tokens + "]", list.get(tokens), p.toString());
            assertEquals(5, f.ints(qlab.engine.gguf.GgufTokenizer.TOKEN_TYPE)[4095], p.toString());
            assertEquals(tokens, qlab.engine.gguf.GgufTokenizer.read(f).vocabSize(), p.toString());
            assertEquals(20L, f.integer("general.sampling.top_k"), p.toString());
            assertEquals(0.7f, (float) f.number("general.sampling.temp"), p.toString());
            assertEquals(0.8f, (float) f.number("general.sampling.top_p"), p.toString());
        }
    }

    @Test
    void generateChatUsesTheTemplateAGgufCarries() throws Exception {
        // tiny-k with the Qwen2.5 chat template in its tokenizer_config.json: export writes it to the GGUF
        Path dir = tmp.resolve("tiny-k-chat");
        Files.createDirectories(dir);
        for (String f : List.of("config.json", "model.safetensors", "tokenizer.json")) {
            Files.copy(GgmlFixtures.model("tiny-k").resolve(f), dir.resolve(f));
        }
        var json = new com.fasterxml.jackson.databind.ObjectMapper();
        var config = (com.fasterxml.jackson.databind.node.ObjectNode) json.readTree(
                GgmlFixtures.model("tiny-k").resolve("tokenizer_config.json").toFile());
        config.put("chat_template", Files.readString(qlab.engine.testing.Fixtures.oracle("chat", "qwen2.5_chat_template.jinja")));
        json.writeValue(dir.resolve("tokenizer_config.json").toFile(), config);
        Path gguf = tmp.resolve("chat.gguf");
        CliRun e = CliRun.of("export", "--model", dir.toString(), "--format", "f16", "--out", gguf.toString(), "--threads", "1");
        assertEquals(0, e.exit(), e.err());

        String[] chat = {"--prompt", "Hello there", "--chat", "--max-tokens", "6", "--ignore-eos", "--json", "--threads", "1"};
        CliRun fromDir = CliRun.of(concat(new String[] {"generate", "--model", dir.toString()}, chat));
        CliRun fromGguf = CliRun.of(concat(new String[] {"generate", "--model", gguf.toString()}, chat));
        assertEquals(0, fromDir.exit(), fromDir.err());
        assertEquals(0, fromGguf.exit(), fromGguf.err());
        var a = json.readTree(fromDir.out());
        var b = json.readTree(fromGguf.out());
        assertEquals(4094, a.get("prompt_ids").get(0).asInt(), "the prompt opens with <|im_start|>: " + a);
        assertEquals(a.get("prompt_ids"), b.get("prompt_ids"));
        assertEquals(a.get("ids"), b.get("ids"));

        // a GGUF without a template: one line naming the field
        CliRun none = CliRun.of("generate", "--model", GgmlFixtures.model("tiny-k.f16.gguf").toString(), "--prompt", "hi",
                "--chat", "--max-tokens", "2");
        assertEquals(2, none.exit(), none.err());
        assertTrue(none.err().contains("tokenizer.chat_template"), none.err());
        assertEquals(1, none.err().strip().lines().count(), none.err());
    }

    private static String[] concat(String[] a, String[] b) {
        String[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    @Test
    void aSweepStartsFromAGgufDequantizedToTheF32Reference() throws Exception {
        Path text = GgmlFixtures.home().resolve("datasets/eval/en-prose.txt");
        Path f = write("gguf.yaml", """
                qlab_sweep: 1
                model: {path: %s}
                formats: [q4_0]
                group_sizes: [32]
                threads: [1]
                activations: [f32]
                evaluation: {text: %s, ctx: 64, tokens: 256}
                measurements: [quality]
                """.formatted(GgmlFixtures.model("tiny-k.q8_0.gguf"), text));
        Path out = tmp.resolve("sweep-out");
        CliCapture c = CliCapture.run("sweep", f.toString(), "--out", out.toString(), "--cache", tmp.resolve("cache").toString());
        assertEquals(0, c.exit(), c.err());
        var rows = qlab.pipeline.results.ResultFiles.readRows(java.util.List.of(out));
        assertEquals(1, rows.size(), rows.toString());
        assertTrue(rows.get(0).ok(), rows.toString());
        assertEquals("tiny-k.q8_0.gguf (dequantized to f32)", rows.get(0).modelId());
        assertTrue(rows.get(0).klMean() > 0, rows.toString());

        Path dir = tmp.resolve("frontier");
        CliCapture p = CliCapture.run("pareto", out.toString(), "--export-gguf", dir.toString(), "--model",
                GgmlFixtures.model("tiny-k.q8_0.gguf").toString());
        assertEquals(0, p.exit(), p.err());
        try (var files = Files.list(dir)) {
            List<Path> written = files.toList();
            assertEquals(1, written.size(), written.toString());
            assertEquals("Q4_0", qlab.quant.checkpoint.GgufCheckpoint.open(written.get(0)).tensor("blk.0.attn_q.weight")
                    .type().name());
        }
        CliCapture noModel = CliCapture.run("pareto", out.toString(), "--export-gguf", dir.toString());
        assertEquals(2, noModel.exit());
        assertTrue(noModel.err().contains("--model"), noModel.err());
    }

    private Path write(String name, String content) throws Exception {
        Path p = tmp.resolve(name);
        Files.writeString(p, content);
        return p;
    }
}
