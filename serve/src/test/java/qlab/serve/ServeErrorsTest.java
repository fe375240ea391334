package qlab.serve;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Every refused request: its status, and an OpenAI error object naming the field. */
@Timeout(120)
class ServeErrorsTest {

    static final String KEY = "test-key";
    static DemoServer s;

    @BeforeAll
    static void start() {
        s = new DemoServer(2, 8, 8L << 20, 4096, KEY);
    }

    @AfterAll
    static void stop() {
        s.close();
    }

    static Stream<Arguments> badBodies() {
        String tooLong = Arrays.toString(new int[512]).replace(" ", "");
        return Stream.of(
                Arguments.of("/v1/completions", "{", 400, null, "not valid JSON"),
                Arguments.of("/v1/completions", "", 400, null, "empty"),
                Arguments.of("/v1/completions", "[1]", 400, null, "JSON object"),
                Arguments.of("/v1/completions", "{}", 400, "prompt", "\"prompt\" is required"),
                Arguments.of("/v1/completions", "{\"prompt\": 5}", 400, "prompt", "\"prompt\""),
                Arguments.of("/v1/completions", "{\"prompt\": []}", 400, "prompt", "\"prompt\""),
                Arguments.of("/v1/completions", "{\"prompt\": \"\"}", 400, "prompt", "no tokens"),
                Arguments.of("/v1/completions", "{\"prompt\": [1, -1]}", 400, "prompt", "token ids"),
                Arguments.of("/v1/completions", "{\"prompt\": [99999999]}", 400, "prompt", "token ids"),
                Arguments.of("/v1/completions", "{\"prompt\": [[1], \"a\"]}", 400, "prompt", "\"prompt\""),
                Arguments.of("/v1/completions", "{\"prompt\": " + tooLong + "}", 400, "prompt", "context"),
                Arguments.of("/v1/completions", "{\"prompt\": \"a\", \"max_tokens\": -1}", 400, "max_tokens", "\"max_tokens\""),
                Arguments.of("/v1/completions", "{\"prompt\": \"a\", \"max_tokens\": \"ten\"}", 400, "max_tokens", "integer"),
                Arguments.of("/v1/completions", "{\"prompt\": \"a\", \"max_tokens\": 1.5}", 400, "max_tokens", "integer"),
                Arguments.of("/v1/completions", "{\"prompt\": \"a\", \"max_tokens\": 100000000000}", 400, "max_tokens", "\"max_tokens\""),
                Arguments.of("/v1/completions", "{\"prompt\": \"a\", \"max_tokens\": 512}", 400, "max_tokens", "context"),
                Arguments.of("/v1/completions", "{\"prompt\": \"a\", \"temperature\": -1}", 400, "temperature", "\"temperature\""),
                Arguments.of("/v1/completions", "{\"prompt\": \"a\", \"temperature\": \"hot\"}", 400, "temperature", "number"),
                Arguments.of("/v1/completions", "{\"prompt\": \"a\", \"temperature\": 1e308}", 400, "temperature", "\"temperature\""),
                Arguments.of("/v1/completions", "{\"prompt\": \"a\", \"top_p\": 1.5}", 400, "top_p", "\"top_p\""),
                Arguments.of("/v1/completions", "{\"prompt\": \"a\", \"top_k\": -3}", 400, "top_k", "\"top_k\""),
                Arguments.of("/v1/completions", "{\"prompt\": \"a\", \"min_p\": 2}", 400, "min_p", "\"min_p\""),
                Arguments.of("/v1/completions", "{\"prompt\": \"a\", \"repetition_penalty\": 0}", 400, "repetition_penalty", "\"repetition_penalty\""),
                Arguments.of("/v1/completions", "{\"prompt\": \"a\", \"seed\": \"x\"}", 400, "seed", "\"seed\""),
                Arguments.of("/v1/completions", "{\"prompt\": \"a\", \"stop\": 5}", 400, "stop", "\"stop\""),
                Arguments.of("/v1/completions", "{\"prompt\": \"a\", \"stop\": [\"a\", \"\"]}", 400, "stop", "\"stop\""),
                Arguments.of("/v1/completions", "{\"prompt\": \"a\", \"stop\": [\"a\",\"b\",\"c\",\"d\",\"e\"]}", 400, "stop", "\"stop\""),
                Arguments.of("/v1/completions", "{\"prompt\": \"a\", \"logprobs\": 50}", 400, "logprobs", "\"logprobs\""),
                Arguments.of("/v1/completions", "{\"prompt\": \"a\", \"echo\": \"yes\"}", 400, "echo", "boolean"),
                Arguments.of("/v1/completions", "{\"prompt\": \"a\", \"echo\": true, \"stream\": true}", 400, "echo", "\"echo\""),
                Arguments.of("/v1/completions", "{\"prompt\": \"a\", \"n\": 2}", 400, "n", "\"n\""),
                Arguments.of("/v1/completions", "{\"prompt\": \"a\", \"stream\": \"no\"}", 400, "stream", "boolean"),
                Arguments.of("/v1/completions", "{\"prompt\": \"a\", \"stream_options\": 1}", 400, "stream_options", "\"stream_options\""),
                Arguments.of("/v1/chat/completions", "{}", 400, "messages", "\"messages\" is required"),
                Arguments.of("/v1/chat/completions", "{\"messages\": []}", 400, "messages", "non-empty"),
                Arguments.of("/v1/chat/completions", "{\"messages\": \"hi\"}", 400, "messages", "\"messages\""),
                Arguments.of("/v1/chat/completions", "{\"messages\": [{\"role\": \"user\"}]}", 400, "messages", "content"),
                Arguments.of("/v1/chat/completions", "{\"messages\": [{\"role\": \"user\", \"content\": 5}]}", 400, "messages", "content"),
                Arguments.of("/v1/chat/completions", "{\"messages\": [{\"content\": \"x\"}]}", 400, "messages", "role"),
                Arguments.of("/v1/chat/completions", "{\"messages\": [{\"role\": \"user\", \"content\": \"x\"}], \"max_tokens\": 0}", 400, "max_tokens", "\"max_tokens\""),
                Arguments.of("/v1/chat/completions", "{\"messages\": [{\"role\": \"user\", \"content\": \"x\"}], \"top_logprobs\": 21}", 400, "top_logprobs", "\"top_logprobs\""),
                Arguments.of("/v1/chat/completions", "{\"messages\": [{\"role\": \"user\", \"content\": \"x\"}], \"logprobs\": 1}", 400, "logprobs", "boolean"),
                Arguments.of("/tokenize", "{\"content\": 3}", 400, "content", "\"content\""),
                Arguments.of("/tokenize", "{}", 400, "content", "\"content\""),
                Arguments.of("/detokenize", "{\"tokens\": \"x\"}", 400, "tokens", "\"tokens\""),
                Arguments.of("/detokenize", "{\"tokens\": [1, 2.5]}", 400, "tokens", "\"tokens\""));
    }

    @ParameterizedTest
    @MethodSource("badBodies")
    void badRequestsAreRefusedNamingTheField(String path, String body, int status, String param, String says)
            throws Exception {
        HttpResponse<String> r = s.post(path, body);
        assertError(r, status, param, says);
    }

    static JsonNode assertError(HttpResponse<String> r, int status, String param, String says) throws Exception {
        assertEquals(status, r.statusCode(), r.body());
        assertTrue(r.headers().firstValue("Content-Type").orElse("").startsWith("application/json"));
        JsonNode e = DemoServer.JSON.readTree(r.body()).get("error");
        assertTrue(e.get("message").asText().contains(says), e.get("message").asText());
        assertTrue(e.has("type") && e.has("code") && e.has("param"), r.body());
        if (param != null) {
            assertEquals(param, e.get("param").asText());
        }
        return e;
    }

    @Test
    void aBodyPastTheLimitIs413() throws Exception {
        String big = "{\"prompt\": \"" + "a".repeat(5000) + "\"}";
        JsonNode e = assertError(s.post("/v1/completions", big), 413, null, "larger than the limit");
        assertEquals("request_too_large", e.get("code").asText());
        // The same without a Content-Length (chunked): refused while it is read.
        HttpRequest chunked = HttpRequest.newBuilder(s.uri("/v1/completions"))
                .header("Authorization", "Bearer " + KEY)
                .POST(HttpRequest.BodyPublishers.ofInputStream(() -> new java.io.ByteArrayInputStream(
                        big.getBytes(StandardCharsets.UTF_8)))).build();
        assertError(s.client.send(chunked, HttpResponse.BodyHandlers.ofString()), 413, null, "larger than the limit");
    }

    @Test
    void theApiKeyGuardsEverythingButHealth() throws Exception {
        HttpRequest none = HttpRequest.newBuilder(s.uri("/v1/models")).GET().build();
        JsonNode e = assertError(s.client.send(none, HttpResponse.BodyHandlers.ofString()), 401, null, "API key");
        assertEquals("invalid_api_key", e.get("code").asText());
        HttpRequest wrong = HttpRequest.newBuilder(s.uri("/metrics")).header("Authorization", "Bearer nope").GET().build();
        assertError(s.client.send(wrong, HttpResponse.BodyHandlers.ofString()), 401, null, "API key");
        HttpRequest post = HttpRequest.newBuilder(s.uri("/v1/completions"))
                .POST(HttpRequest.BodyPublishers.ofString("{\"prompt\": \"a\"}")).build();
        assertError(s.client.send(post, HttpResponse.BodyHandlers.ofString()), 401, null, "API key");
        HttpRequest health = HttpRequest.newBuilder(s.uri("/health")).GET().build();
        assertEquals(200, s.client.send(health, HttpResponse.BodyHandlers.ofString()).statusCode());
        assertEquals(200, s.get("/v1/models").statusCode());
    }

    /** The server listens before the model is loaded: /health and every model route answer 503 until it is ready. */
    @Test
    void healthIs503WhileTheModelLoads() throws Exception {
        OpenAiServer loading = OpenAiServer.start(new OpenAiServer.Options("127.0.0.1", 0,
                new Scheduler.Settings(1, 1, 128, 64, false, 0), 1 << 20, null));
        try (qlab.engine.util.WorkerPool pool = new qlab.engine.util.WorkerPool(1)) {
            java.net.URI base = java.net.URI.create("http://127.0.0.1:" + loading.port());
            HttpResponse<String> health = s.client.send(HttpRequest.newBuilder(base.resolve("/health")).GET().build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(503, health.statusCode());
            HttpResponse<String> models = s.client.send(HttpRequest.newBuilder(base.resolve("/v1/models")).GET().build(),
                    HttpResponse.BodyHandlers.ofString());
            assertError(models, 503, null, "loading");
            loading.ready(new ServedModel("demo", new qlab.engine.model.Transformer(DemoServer.model(), pool),
                    DemoServer.tokenizer(), null, java.util.Set.of(4093)));
            health = s.client.send(HttpRequest.newBuilder(base.resolve("/health")).GET().build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(200, health.statusCode());
            HttpResponse<String> chat = s.client.send(HttpRequest.newBuilder(base.resolve("/v1/chat/completions"))
                    .POST(HttpRequest.BodyPublishers.ofString("{\"messages\": [{\"role\": \"user\", \"content\": \"x\"}]}"))
                    .build(), HttpResponse.BodyHandlers.ofString());
            assertError(chat, 400, "messages", "no chat template");
        } finally {
            loading.close();
        }
    }

    @Test
    void unknownRoutesAndWrongMethods() throws Exception {
        assertError(s.get("/v1/embeddings"), 404, null, "no route");
        assertError(s.get("/v1/completions"), 405, null, "POST");
        assertError(s.post("/health", "{}"), 405, null, "GET");
    }

    /** A streaming client that goes away cancels its sequence: the slot and its KV are freed. */
    @Test
    void aClientThatDisconnectsCancelsItsSequence() throws Exception {
        try (DemoServer big = new DemoServer(1, 4, 0, 1 << 20, null, 4096)) {
            double cancelledBefore = big.metric("qlab_cancelled_total");
            String body = "{\"prompt\": \"The harbour at dawn\", \"max_tokens\": 4000, \"stream\": true}";
            try (Socket socket = new Socket("127.0.0.1", big.server.port())) {
                OutputStream out = socket.getOutputStream();
                out.write(("POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                        + "Content-Length: " + body.getBytes(StandardCharsets.UTF_8).length + "\r\n\r\n" + body)
                        .getBytes(StandardCharsets.UTF_8));
                out.flush();
                InputStream in = socket.getInputStream();
                String seen = "";
                byte[] buf = new byte[4096];
                while (!seen.contains("data: ")) {
                    int n = in.read(buf);
                    assertTrue(n > 0, "the stream started");
                    seen += new String(buf, 0, n, StandardCharsets.UTF_8);
                }
                assertTrue(big.metric("qlab_running_sequences") == 1);
            }
            long deadline = System.nanoTime() + 30_000_000_000L;
            while (big.metric("qlab_running_sequences") > 0 && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertEquals(0, big.metric("qlab_running_sequences"));
            assertEquals(0, big.metric("qlab_kv_cache_bytes"));
            assertEquals(cancelledBefore + 1, big.metric("qlab_cancelled_total"));
            assertTrue(big.metric("qlab_generated_tokens_total") < 4000, "stopped early");
        }
    }
}
