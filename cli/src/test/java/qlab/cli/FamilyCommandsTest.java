package qlab.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import qlab.engine.synthetic.SyntheticPreset;
import qlab.engine.testing.Fixtures;

/** Llama and Qwen3 models through the command line: gen, inspect, calibrate, quantize, ppl, kl, bench, generate. */
class FamilyCommandsTest {

    @TempDir
    Path tmp;

    private static JsonNode json(CliRun r) throws Exception {
        assertEquals(0, r.exit(), r.err());
        return new ObjectMapper().readTree(r.out());
    }

    @ParameterizedTest
    @ValueSource(strings = {"tiny-llama", "tiny-qwen3"})
    void everyMeasurementRunsOnTheFamily(String preset) throws Exception {
        Path model = tmp.resolve(preset);
        assertEquals(0, CliRun.of("gen", "--preset", preset, "--seed", "3", "--out", model.toString()).exit());
        JsonNode inspect = json(CliRun.of("inspect", "--model", model.toString(), "--json"));
        assertEquals(SyntheticPreset.byId(preset).config().parameterCount(), inspect.get("parameters").longValue());
        assertTrue(inspect.get("ok").booleanValue());

        Path calib = Path.of(System.getProperty("qlab.home"), "datasets", "calib", "en-prose.txt");
        Path text = Path.of(System.getProperty("qlab.home"), "datasets", "eval", "en-prose.txt");
        Path im = tmp.resolve(preset + ".imatrix");
        assertEquals(0, CliRun.of("calibrate", "--model", model.toString(), "--text", calib.toString(), "--max-tokens", "300",
                "--ctx", "100", "--out", im.toString()).exit());
        Path q = tmp.resolve(preset + ".q4_0.safetensors");
        CliRun qr = CliRun.of("quantize", "--model", model.toString(), "--format", "q4_0", "--attn", "q8_0", "--imatrix",
                im.toString(), "--out", q.toString());
        assertEquals(0, qr.exit(), qr.err());
        JsonNode quantized = json(CliRun.of("inspect", "--model", q.toString(), "--json"));
        assertEquals(inspect.get("tensors").intValue(), quantized.get("tensors").intValue());
        double bpw = quantized.get("bits_per_weight").asDouble();
        assertTrue(bpw > 4.5 && bpw < 8.5, "bits per weight " + bpw);

        JsonNode ppl = json(CliRun.of("ppl", "--model", q.toString(), "--text", text.toString(), "--ctx", "100",
                "--max-tokens", "200", "--json"));
        assertTrue(ppl.get("ppl").asDouble() > 1, ppl.toString());
        JsonNode kl = json(CliRun.of("kl", "--base", model.toString(), "--model", q.toString(), "--text", text.toString(),
                "--ctx", "100", "--max-tokens", "200", "--activations", "int8", "--cache", tmp.resolve("cache").toString(), "--json"));
        assertTrue(kl.get("kl").get("mean").asDouble() > 0, kl.toString());

        JsonNode bench = json(CliRun.of("bench", "--model", q.toString(), "--prompt-tokens", "8", "--decode-tokens", "4",
                "--reps", "1", "--threads", "1", "--bandwidth-mib", "16", "--json"));
        assertTrue(bench.get("decode_tps_median").asDouble() > 0);
        JsonNode batch = json(CliRun.of("bench-batch", "--model", q.toString(), "--batch", "1,2", "--steps", "2", "--reps", "1",
                "--prompt-tokens", "4", "--threads", "1", "--json"));
        assertEquals(2, batch.get("results").size());
        JsonNode gen = json(CliRun.of("generate", "--model", q.toString(), "--ids", "5,6,7", "--max-tokens", "4", "--json"));
        assertEquals(4, gen.get("ids").size());
    }

    @ParameterizedTest
    @ValueSource(strings = {"tiny-llama", "tiny-qwen3"})
    void anExportedGgufRunsAsTheSamePlanQuantizedToSafetensors(String preset) throws Exception {
        Path model = tmp.resolve(preset);
        assertEquals(0, CliRun.of("gen", "--preset", preset, "--seed", "4", "--out", model.toString()).exit());
        Path gguf = tmp.resolve(preset + ".gguf");
        CliRun e = CliRun.of("export", "--model", model.toString(), "--format", "q4_0+mlp-down=f16", "--out", gguf.toString(),
                "--threads", "1");
        assertEquals(0, e.exit(), e.err());
        JsonNode inspect = json(CliRun.of("inspect", "--model", gguf.toString(), "--json"));
        assertEquals(SyntheticPreset.byId(preset).config().parameterCount(), inspect.get("parameters").longValue());
        assertEquals(SyntheticPreset.byId(preset).config().family().modelType(), inspect.get("config").get("model_type").asText());
        Path q = tmp.resolve(preset + ".q4_0.safetensors");
        assertEquals(0, CliRun.of("quantize", "--model", model.toString(), "--format", "q4_0", "--mlp-down", "f16",
                "--out", q.toString(), "--threads", "1").exit());
        Path a = tmp.resolve("a.f32");
        Path b = tmp.resolve("b.f32");
        for (Path[] run : new Path[][] {{gguf, a}, {q, b}}) {
            CliRun r = CliRun.of("logits", "--model", run[0].toString(), "--ids", "5,6,7,300,9", "--out", run[1].toString(),
                    "--threads", "1");
            assertEquals(0, r.exit(), r.err());
        }
        // the GGUF's f16 ffn_down loads widened to f32, the safetensors one runs on the f16 kernel: equal up to rounding
        float[] fromGguf = floats(a);
        float[] fromSafetensors = floats(b);
        assertEquals(fromSafetensors.length, fromGguf.length);
        for (int i = 0; i < fromGguf.length; i++) {
            assertEquals(fromSafetensors[i], fromGguf[i], 1e-4 * (1 + Math.abs(fromSafetensors[i])), preset + " logit " + i);
        }
    }

    private static float[] floats(Path f32File) throws Exception {
        var buf = java.nio.ByteBuffer.wrap(Files.readAllBytes(f32File)).order(java.nio.ByteOrder.LITTLE_ENDIAN).asFloatBuffer();
        float[] out = new float[buf.remaining()];
        buf.get(out);
        return out;
    }

    @Test
    void aSweepRunsOnLlamaAndQwen3Presets() throws Exception {
        Path text = Path.of(System.getProperty("qlab.home"), "datasets", "eval", "en-prose.txt");
        for (String preset : new String[] {"tiny-llama", "tiny-qwen3"}) {
            Path f = tmp.resolve(preset + ".yaml");
            Files.writeString(f, """
                    qlab_sweep: 1
                    model: {preset: %s, seed: 2}
                    formats: [q4_0]
                    group_sizes: [32]
                    threads: [1]
                    evaluation: {text: %s, ctx: 64, tokens: 128}
                    measurements: [quality]
                    """.formatted(preset, text.toAbsolutePath()));
            Path out = tmp.resolve(preset + "-out");
            CliCapture c = CliCapture.run("sweep", f.toString(), "--out", out.toString(), "--cache", tmp.resolve("cache").toString());
            assertEquals(0, c.exit(), c.err());
            assertTrue(c.err().contains("1 ok, 0 skipped, 0 failed"), c.err());
            for (var row : qlab.pipeline.results.ResultFiles.readRows(java.util.List.of(out))) {
                assertTrue(row.klMean() > 0 && Double.isFinite(row.klMean()), row.toString());
            }
        }
    }

    @Test
    void theLlamaFixtureGeneratesItsGoldenContinuation() throws Exception {
        Path dir = Fixtures.oracle().resolve("tiny-llama/f32");
        JsonNode seq = Fixtures.json(dir.resolve("golden/manifest.json")).get("sequences").get(2);
        StringBuilder ids = new StringBuilder();
        for (JsonNode id : seq.get("input_ids")) {
            ids.append(ids.isEmpty() ? "" : ",").append(id.intValue());
        }
        JsonNode gen = json(CliRun.of("generate", "--model", dir.toString(), "--ids", ids.toString(), "--max-tokens", "20",
                "--temperature", "0", "--json"));
        assertEquals(seq.get("greedy_continuation"), gen.get("ids"));
    }

    @Test
    void anUnsupportedRopeScalingFailsInOneLineNamingTheField() throws Exception {
        Path dir = tmp.resolve("yarn");
        Path src = Fixtures.oracle().resolve("tiny-llama/f32");
        Files.createDirectories(dir);
        Files.copy(src.resolve("model.safetensors"), dir.resolve("model.safetensors"));
        Files.writeString(dir.resolve("config.json"),
                Files.readString(src.resolve("config.json")).replace("\"rope_type\": \"llama3\"", "\"rope_type\": \"yarn\""));
        CliRun r = CliRun.of("generate", "--model", dir.toString(), "--ids", "1,2", "--max-tokens", "2");
        assertTrue(r.exit() != 0);
        assertEquals(1, r.err().strip().lines().count(), r.err());
        assertTrue(r.err().contains("\"rope_scaling\"") && r.err().contains("yarn"), r.err());
    }
}
