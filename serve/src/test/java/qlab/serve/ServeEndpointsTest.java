package qlab.serve;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import qlab.engine.eval.Perplexity;
import qlab.engine.eval.ScoringMode;
import qlab.engine.model.KvCache;
import qlab.engine.model.Transformer;
import qlab.engine.sampling.Generation;
import qlab.engine.sampling.Sampler;
import qlab.engine.sampling.SamplingConfig;
import qlab.engine.util.WorkerPool;

/** Every endpoint over real HTTP, on the demo model: shapes, and numbers pinned against the engine itself. */
@Timeout(180)
class ServeEndpointsTest {

    static DemoServer s;

    @BeforeAll
    static void start() {
        s = new DemoServer();
    }

    @AfterAll
    static void stop() {
        s.close();
    }

    static Map<String, Object> body(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put((String) kv[i], kv[i + 1]);
        }
        return m;
    }

    static String prose(int chars) throws Exception {
        String text = Files.readString(DemoServer.DEMO.resolve("../../datasets/eval/en-prose.txt").normalize());
        return text.substring(0, chars);
    }

    @Test
    void healthModelsTokenizeDetokenizeMetrics() throws Exception {
        HttpResponse<String> health = s.get("/health");
        assertEquals(200, health.statusCode());
        assertEquals("ok", DemoServer.JSON.readTree(health.body()).get("status").asText());
        JsonNode models = DemoServer.JSON.readTree(s.get("/v1/models").body());
        assertEquals("list", models.get("object").asText());
        assertEquals("demo", models.get("data").get(0).get("id").asText());

        String text = "Every morning, the old woman";
        JsonNode tokens = s.ok("/tokenize", body("content", text)).get("tokens");
        int[] expected = DemoServer.tokenizer().encode(text);
        assertEquals(expected.length, tokens.size());
        for (int i = 0; i < expected.length; i++) {
            assertEquals(expected[i], tokens.get(i).asInt());
        }
        assertEquals(text, s.ok("/detokenize", body("tokens", tokens)).get("content").asText());

        HttpResponse<String> metrics = s.get("/metrics");
        assertEquals(200, metrics.statusCode());
        assertTrue(metrics.headers().firstValue("Content-Type").orElse("").startsWith("text/plain"));
        assertTrue(metrics.body().contains("# TYPE qlab_generated_tokens_total counter"), metrics.body());
        assertTrue(metrics.body().contains("qlab_requests_total{route=\"/tokenize\",status=\"200\"} 1"), metrics.body());
    }

    @Test
    void greedyCompletionIsWhatTheEngineGenerates() throws Exception {
        String prompt = "The harbour at dawn";
        JsonNode r = s.ok("/v1/completions", body("prompt", prompt, "max_tokens", 20, "temperature", 0));
        int[] ids = DemoServer.tokenizer().encode(prompt);
        int[] gen;
        try (WorkerPool pool = new WorkerPool(1)) {
            Transformer tf = new Transformer(DemoServer.model(), pool);
            KvCache cache = tf.newCache(ids.length + 20);
            Set<Integer> stops = Set.of(4093, 4095);
            Generation.Result g = Generation.run(tf, cache, new int[0], ids, new Sampler(SamplingConfig.greedy()), 20,
                    stops::contains, id -> { }, false);
            gen = g.stopped() ? Arrays.copyOf(g.ids(), g.ids().length - 1) : g.ids();
        }
        JsonNode choice = r.get("choices").get(0);
        assertEquals(DemoServer.tokenizer().decode(gen), choice.get("text").asText());
        assertEquals("text_completion", r.get("object").asText());
        assertEquals(gen.length == 20 ? "length" : "stop", choice.get("finish_reason").asText());
        assertEquals(ids.length, r.get("usage").get("prompt_tokens").asInt());
        assertEquals(gen.length, r.get("usage").get("completion_tokens").asInt());
        assertEquals(ids.length + gen.length, r.get("usage").get("total_tokens").asInt());
    }

    /** The lm-evaluation-harness request: echo's log-probabilities are ppl's, token for token. */
    @Test
    void echoLogprobsArePerplexitysPerTokenLogprobs() throws Exception {
        String text = prose(900);
        int[] ids = DemoServer.tokenizer().encode(text);
        assertTrue(ids.length > 150, "a prompt of several prefill chunks: " + ids.length);
        JsonNode r = s.ok("/v1/completions", body("prompt", ids, "max_tokens", 1, "temperature", 0, "logprobs", 1,
                "echo", true));
        JsonNode lp = r.get("choices").get(0).get("logprobs");
        Perplexity.Result ppl;
        try (WorkerPool pool = new WorkerPool(1)) {
            ppl = Perplexity.run(new Transformer(DemoServer.model(), pool), ids, ids.length, ScoringMode.ALL);
        }
        JsonNode tokenLogprobs = lp.get("token_logprobs");
        assertEquals(ids.length + 1, tokenLogprobs.size(), "prompt tokens and the one generated");
        assertTrue(tokenLogprobs.get(0).isNull());
        assertTrue(lp.get("top_logprobs").get(0).isNull());
        double sum = 0;
        for (int p = 1; p < ids.length; p++) {
            double echo = tokenLogprobs.get(p).asDouble();
            assertEquals(-ppl.nll()[p - 1], echo, 0.0, "token " + p + ": the same passes give the same bits");
            sum += echo;
        }
        assertEquals(ppl.ppl(), Math.exp(-sum / (ids.length - 1)), 1e-9 * ppl.ppl());
        assertEquals(ids.length + 1, lp.get("tokens").size());
        assertEquals(ids.length + 1, lp.get("text_offset").size());
        assertEquals(0, lp.get("text_offset").get(0).asInt());
        String all = r.get("choices").get(0).get("text").asText();
        assertTrue(all.startsWith(text));
        int last = lp.get("text_offset").get(ids.length).asInt();
        assertEquals(text.length(), last, "the generated token's offset is the prompt's length");
        for (int p = 0; p < ids.length; p++) {
            int off = lp.get("text_offset").get(p).asInt();
            assertTrue(all.startsWith(lp.get("tokens").get(p).asText(), off) || lp.get("tokens").get(p).asText().contains("\uFFFD"),
                    "token " + p + " at its offset");
        }
    }

    @Test
    void chatStreamsTheSameTextAsWhole() throws Exception {
        Map<String, Object> req = body("messages", List.of(body("role", "system", "content", "You write short lines."),
                body("role", "user", "content", "Tell me about the sea.")), "max_tokens", 24, "temperature", 0.8, "seed", 11,
                "logprobs", true, "top_logprobs", 3);
        JsonNode whole = s.ok("/v1/chat/completions", req);
        assertEquals("chat.completion", whole.get("object").asText());
        JsonNode choice = whole.get("choices").get(0);
        assertEquals("assistant", choice.get("message").get("role").asText());
        JsonNode content = choice.get("logprobs").get("content");
        assertEquals(whole.get("usage").get("completion_tokens").asInt(), content.size());
        for (JsonNode t : content) {
            assertEquals(3, t.get("top_logprobs").size());
            assertTrue(t.get("logprob").asDouble() <= 0);
            assertTrue(t.get("top_logprobs").get(0).get("logprob").asDouble() >= t.get("logprob").asDouble() - 1e-12);
        }

        Map<String, Object> streamed = new LinkedHashMap<>(req);
        streamed.put("stream", true);
        streamed.put("stream_options", body("include_usage", true));
        HttpResponse<java.io.InputStream> r = s.client.send(HttpRequest.newBuilder(s.uri("/v1/chat/completions"))
                .POST(HttpRequest.BodyPublishers.ofString(DemoServer.JSON.writeValueAsString(streamed))).build(),
                HttpResponse.BodyHandlers.ofInputStream());
        assertEquals(200, r.statusCode());
        assertTrue(r.headers().firstValue("Content-Type").orElse("").startsWith("text/event-stream"));
        StringBuilder text = new StringBuilder();
        List<Double> logprobs = new ArrayList<>();
        String finish = null;
        JsonNode usage = null;
        boolean done = false;
        try (BufferedReader in = new BufferedReader(new InputStreamReader(r.body(), StandardCharsets.UTF_8))) {
            for (String line; (line = in.readLine()) != null; ) {
                if (line.isEmpty()) {
                    continue;
                }
                assertTrue(line.startsWith("data: "), line);
                String data = line.substring(6);
                if (data.equals("[DONE]")) {
                    done = true;
                    continue;
                }
                JsonNode c = DemoServer.JSON.readTree(data);
                assertEquals("chat.completion.chunk", c.get("object").asText());
                if (c.has("usage")) {
                    usage = c.get("usage");
                    continue;
                }
                JsonNode ch = c.get("choices").get(0);
                if (ch.get("delta").has("content")) {
                    text.append(ch.get("delta").get("content").asText());
                }
                if (ch.get("logprobs").isObject()) {
                    ch.get("logprobs").get("content").forEach(t -> logprobs.add(t.get("logprob").asDouble()));
                }
                if (!ch.get("finish_reason").isNull()) {
                    finish = ch.get("finish_reason").asText();
                }
            }
        }
        assertTrue(done);
        assertEquals(choice.get("message").get("content").asText(), text.toString());
        assertEquals(choice.get("finish_reason").asText(), finish);
        assertEquals(whole.get("usage").get("prompt_tokens"), usage.get("prompt_tokens"));
        assertEquals(whole.get("usage").get("completion_tokens"), usage.get("completion_tokens"));
        // the same prompt again: it comes whole from the prefix cache, and changes nothing
        assertEquals(usage.get("prompt_tokens").asInt(), usage.get("prompt_tokens_details").get("cached_tokens").asInt());
        List<Double> expected = new ArrayList<>();
        content.forEach(t -> expected.add(t.get("logprob").asDouble()));
        assertEquals(expected, logprobs);
    }

    @Test
    void stopStringsCutTheText() throws Exception {
        JsonNode free = s.ok("/v1/completions", body("prompt", "Every morning, the old woman", "max_tokens", 30,
                "temperature", 0));
        String text = free.get("choices").get(0).get("text").asText();
        String stop = text.substring(8, 11);
        JsonNode cut = s.ok("/v1/completions", body("prompt", "Every morning, the old woman", "max_tokens", 30,
                "temperature", 0, "stop", List.of("never-there", stop)));
        assertEquals(text.substring(0, text.indexOf(stop)), cut.get("choices").get(0).get("text").asText());
        assertEquals("stop", cut.get("choices").get(0).get("finish_reason").asText());
    }

    @Test
    void promptListsAndTokenIdsGiveOneChoiceEach() throws Exception {
        int[] ids = DemoServer.tokenizer().encode("The harbour at dawn");
        JsonNode byText = s.ok("/v1/completions", body("prompt", List.of("The harbour at dawn", "A garden"),
                "max_tokens", 6, "temperature", 0));
        JsonNode byIds = s.ok("/v1/completions", body("prompt", List.of(ids), "max_tokens", 6, "temperature", 0));
        assertEquals(2, byText.get("choices").size());
        assertEquals(1, byText.get("choices").get(1).get("index").asInt());
        assertEquals(byText.get("choices").get(0).get("text"), byIds.get("choices").get(0).get("text"));
        assertNotEquals(byText.get("choices").get(0).get("text"), byText.get("choices").get(1).get("text"));
        assertNull(byIds.get("choices").get(0).get("logprobs").textValue());
    }

    /** Each sequence samples with its own seed: sixteen at once give exactly what each gives alone. */
    @Test
    void concurrentSeededRequestsGiveTheirSoloTokens() throws Exception {
        List<Map<String, Object>> requests = new ArrayList<>();
        String[] starts = {"The harbour", "A garden", "Every morning", "The wind", "On the coast", "Seed catalogues",
                "The neighbours", "A fence panel"};
        for (int i = 0; i < 16; i++) {
            requests.add(body("prompt", starts[i % starts.length] + (i >= 8 ? " again," : ""), "max_tokens", 24,
                    "temperature", 0.9, "top_p", 0.95, "seed", 100 + i, "logprobs", 0));
        }
        List<JsonNode> alone = new ArrayList<>();
        for (Map<String, Object> r : requests) {
            alone.add(s.ok("/v1/completions", r).get("choices").get(0));
        }
        ExecutorService clients = Executors.newFixedThreadPool(16);
        try {
            List<Future<JsonNode>> together = new ArrayList<>();
            for (Map<String, Object> r : requests) {
                Callable<JsonNode> call = () -> s.ok("/v1/completions", r).get("choices").get(0);
                together.add(clients.submit(call));
            }
            for (int i = 0; i < 16; i++) {
                JsonNode t = together.get(i).get();
                assertEquals(alone.get(i).get("text"), t.get("text"), "request " + i);
                assertEquals(alone.get(i).get("logprobs").get("token_logprobs"), t.get("logprobs").get("token_logprobs"),
                        "request " + i + ": the same log-probabilities, bit for bit");
            }
        } finally {
            clients.shutdown();
        }
    }
}
