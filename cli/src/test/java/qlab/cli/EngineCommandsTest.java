package qlab.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import qlab.engine.bench.MachineInfo;
import qlab.engine.model.Model;
import qlab.engine.model.Transformer;
import qlab.engine.util.WorkerPool;

/** gen, inspect, logits, generate and bench through the real command line. */
class EngineCommandsTest {

    @TempDir
    static Path tmp;

    static Path model;

    @BeforeAll
    static void generate() {
        model = tmp.resolve("tiny");
        CliRun r = CliRun.of("gen", "--preset", "tiny", "--seed", "2", "--out", model.toString());
        assertEquals(0, r.exit(), r.err());
    }

    @Test
    void inspectReportsCountsAndJson() throws Exception {
        CliRun r = CliRun.of("inspect", "--model", model.toString(), "--json");
        assertEquals(0, r.exit(), r.err());
        JsonNode j = new ObjectMapper().readTree(r.out());
        assertEquals(354_880, j.get("parameters").longValue());
        assertEquals(2 * 354_880, j.get("bytes").longValue());
        assertEquals(2 + 2 * 12, j.get("tensors").intValue());
        assertTrue(j.get("ok").booleanValue());
    }

    @Test
    void inspectFailsNamingEveryProblem() throws Exception {
        Path bad = tmp.resolve("bad");
        Files.createDirectories(bad);
        Files.copy(model.resolve("model.safetensors"), bad.resolve("model.safetensors"));
        // a config claiming more layers and a different vocabulary than the file holds
        String cfg = Files.readString(model.resolve("config.json"))
                .replace("\"num_hidden_layers\" : 2", "\"num_hidden_layers\" : 3")
                .replace("\"vocab_size\" : 4096", "\"vocab_size\" : 4000");
        Files.writeString(bad.resolve("config.json"), cfg);
        CliRun r = CliRun.of("inspect", "--model", bad.toString());
        assertEquals(1, r.exit());
        assertTrue(r.out().contains("missing tensor model.layers.2.mlp.down_proj.weight"), r.out());
        assertTrue(r.out().contains("model.embed_tokens.weight has shape [4096, 64], expected [4000, 64]"), r.out());
        assertEquals(1, r.err().strip().lines().count(), "one line on stderr: " + r.err());
    }

    @Test
    void logitsWritesRowsPerPositionThatMatchTheEngine() throws Exception {
        Path out = tmp.resolve("logits.bin");
        CliRun r = CliRun.of("logits", "--model", model.toString(), "--ids", "1,2,3,4000", "--out", out.toString(), "--threads", "1");
        assertEquals(0, r.exit(), r.err());
        byte[] bytes = Files.readAllBytes(out);
        assertEquals(4 * 4096 * 4, bytes.length);
        float[] got = new float[4 * 4096];
        ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(got);
        Model m = Model.load(model);
        try (WorkerPool pool = new WorkerPool(1)) {
            Transformer tf = new Transformer(m, pool);
            assertArrayEquals(tf.forward(new int[] {1, 2, 3, 4000}, tf.newCache(4), true), got);
        }
    }

    @Test
    void generateJsonIsOneObjectAndGreedy() throws Exception {
        CliRun r = CliRun.of("generate", "--model", model.toString(), "--ids", "5,6,7", "--max-tokens", "6", "--json");
        assertEquals(0, r.exit(), r.err());
        JsonNode j = new ObjectMapper().readTree(r.out());
        assertEquals(6, j.get("ids").size());
        CliRun text = CliRun.of("generate", "--model", model.toString(), "--ids", "5 6 7", "--max-tokens", "6");
        String[] ids = text.out().strip().split(" ");
        for (int i = 0; i < 6; i++) {
            assertEquals(j.get("ids").get(i).intValue(), Integer.parseInt(ids[i]));
        }
    }

    @Test
    void benchJsonHasTheDocumentedKeys() throws Exception {
        CliRun r = CliRun.of("bench", "--model", model.toString(), "--prompt-tokens", "8", "--decode-tokens", "4",
                "--reps", "2", "--threads", "1", "--bandwidth-mib", "16", "--json");
        assertEquals(0, r.exit(), r.err());
        JsonNode j = new ObjectMapper().readTree(r.out());
        for (String key : new String[] {"prefill_tps", "decode_tps_median", "decode_tps_min", "decode_tps_max",
            "weight_bytes", "threads", "read_bandwidth_gbs", "bandwidth_ratio", "jdk", "vector_bits", "peak_rss_bytes", "huge_page_bytes"}) {
            assertTrue(j.has(key), key);
        }
        if (java.nio.file.Files.isReadable(Path.of("/proc/self/smaps_rollup"))) {
            assertTrue(j.get("huge_page_bytes").asLong(-1) >= 0, "AnonHugePages read on Linux: " + j.get("huge_page_bytes"));
        }
        assertTrue(j.get("decode_tps_min").doubleValue() <= j.get("decode_tps_median").doubleValue());
        assertTrue(j.get("decode_tps_median").doubleValue() <= j.get("decode_tps_max").doubleValue());
        assertEquals(1, j.get("threads").intValue());
    }

    @Test
    void benchReportsThePeakRssOfTheModelNotOfTheBandwidthBuffer() throws Exception {
        assumeTrue(MachineInfo.peakRssBytes() > 0, "no /proc/self/status here");
        // A JVM of its own, whose peak is the tiny model's, far under the 1 GiB buffer (this one's
        // peak is whatever the tests before had reached).
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED",
                "-cp", System.getProperty("java.class.path"), "qlab.cli.Main", "bench", "--model", model.toString(),
                "--prompt-tokens", "4", "--decode-tokens", "2", "--reps", "1", "--threads", "1",
                "--bandwidth-mib", "1024", "--json")
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertEquals(0, p.waitFor(), out);
        long reported = new ObjectMapper().readTree(out).get("peak_rss_bytes").asLong();
        assertTrue(reported > 0 && reported < 1024L << 20, "peak RSS " + reported + " counts the 1 GiB bandwidth buffer");
    }

    @Test
    void userErrorsAreOneLineWithoutAStackTrace() throws Exception {
        Path corrupt = tmp.resolve("corrupt");
        Files.createDirectories(corrupt);
        Files.copy(model.resolve("config.json"), corrupt.resolve("config.json"));
        Files.write(corrupt.resolve("model.safetensors"), new byte[] {9, 0, 0, 0, 0, 0, 0, 0, '{'});
        Path noField = tmp.resolve("nofield");
        Files.createDirectories(noField);
        Files.writeString(noField.resolve("config.json"), Files.readString(model.resolve("config.json")).replace("\"rope_theta\"", "\"rope_theta_x\""));
        String[][] cases = {
            {"inspect", "--model", corrupt.toString()},
            {"generate", "--model", noField.toString(), "--ids", "1"},
            {"generate", "--model", model.toString(), "--ids", "1,x"},
            {"generate", "--model", model.toString(), "--ids", "99999"},
            {"logits", "--model", tmp.resolve("nowhere").toString(), "--ids", "1", "--out", tmp.resolve("o").toString()},
            {"gen", "--preset", "huge", "--out", tmp.resolve("g").toString()},
        };
        String[] expect = {"model.safetensors", "rope_theta", "\"x\" is not a token id", "outside the vocabulary", "nowhere", "unknown preset"};
        for (int i = 0; i < cases.length; i++) {
            CliRun r = CliRun.of(cases[i]);
            assertEquals(2, r.exit(), String.join(" ", cases[i]) + " -> " + r.err());
            String err = r.err().strip();
            assertEquals(1, err.lines().count(), "one line: " + err);
            assertTrue(err.startsWith("qlab: ") && err.contains(expect[i]), err);
            assertFalse(err.contains("Exception") || err.contains("\tat "), err);
        }
    }
}
