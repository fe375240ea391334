package qlab.serve;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.Set;
import qlab.engine.chat.ChatTemplate;
import qlab.engine.model.KvTypes;
import qlab.engine.model.Model;
import qlab.engine.model.Transformer;
import qlab.engine.tokenizer.Tokenizer;
import qlab.engine.util.WorkerPool;

/** A server on the committed demo model, on a loopback ephemeral port, and a JDK HttpClient to talk to it. */
final class DemoServer implements AutoCloseable {

    static final Path DEMO = Path.of(System.getProperty("qlab.home", ".."), "models", "demo");
    static final ObjectMapper JSON = new ObjectMapper();
    private static Model model;
    private static Tokenizer tokenizer;

    final OpenAiServer server;
    final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private final WorkerPool pool;
    private final String apiKey;

    static synchronized Model model() {
        if (model == null) {
            model = Model.load(DEMO);
        }
        return model;
    }

    static synchronized Tokenizer tokenizer() {
        if (tokenizer == null) {
            tokenizer = Tokenizer.load(DEMO);
        }
        return tokenizer;
    }

    DemoServer(int parallel, int queue, long cacheBytes, long maxBodyBytes, String apiKey) {
        this(parallel, queue, cacheBytes, maxBodyBytes, apiKey, 512);
    }

    DemoServer(int parallel, int queue, long cacheBytes, long maxBodyBytes, String apiKey, int ctx) {
        this(parallel, queue, cacheBytes, maxBodyBytes, apiKey, ctx, KvTypes.F32);
    }

    DemoServer(int parallel, int queue, long cacheBytes, long maxBodyBytes, String apiKey, int ctx, KvTypes kv) {
        this.apiKey = apiKey;
        pool = new WorkerPool(2);
        server = OpenAiServer.start(new OpenAiServer.Options("127.0.0.1", 0,
                new Scheduler.Settings(parallel, queue, ctx, 64, false, cacheBytes), maxBodyBytes, apiKey));
        // The demo has no chat template of its own; its vocabulary has ChatML's tokens (4094, 4095).
        server.ready(new ServedModel("demo", new Transformer(model(), pool, kv), tokenizer(),
                ChatTemplate.named("qwen2.5", DEMO), Set.of(4093, 4095)));
    }

    DemoServer() {
        this(16, 64, 64L << 20, 1 << 20, null);
    }

    URI uri(String path) {
        return URI.create("http://127.0.0.1:" + server.port() + path);
    }

    HttpResponse<String> post(String path, String body) throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri(path)).POST(HttpRequest.BodyPublishers.ofString(body))
                .header("Content-Type", "application/json");
        if (apiKey != null) {
            b.header("Authorization", "Bearer " + apiKey);
        }
        return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    HttpResponse<String> get(String path) throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri(path)).GET();
        if (apiKey != null) {
            b.header("Authorization", "Bearer " + apiKey);
        }
        return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** POSTs and parses a 200 answer; fails with the body otherwise. */
    JsonNode ok(String path, Object body) throws IOException, InterruptedException {
        HttpResponse<String> r = post(path, JSON.writeValueAsString(body));
        if (r.statusCode() != 200) {
            throw new AssertionError(path + " answered " + r.statusCode() + ": " + r.body());
        }
        return JSON.readTree(r.body());
    }

    /** A gauge or counter of /metrics (the first sample line of that name, labels included in the name). */
    double metric(String name) throws IOException, InterruptedException {
        for (String line : get("/metrics").body().split("\n")) {
            if (line.startsWith(name + " ")) {
                return Double.parseDouble(line.substring(name.length() + 1));
            }
        }
        return 0;
    }

    @Override
    public void close() {
        server.close();
        pool.close();
    }
}
