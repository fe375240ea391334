package qlab.serve;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import qlab.engine.QlabException;

/**
 * Streaming clients against any OpenAI-compatible server (qlab's, llama.cpp's llama-server): each
 * client sends its requests one after another to /v1/completions with {@code stream: true}, and the
 * generator times the first token (TTFT) and the gaps between tokens (ITL) as the client sees them.
 * Prompts start with the client's and request's number, so no request reuses another's prefix.
 */
public final class LoadGenerator {

    private static final ObjectMapper JSON = new ObjectMapper();

    /** One concurrency level's figures; times in milliseconds. */
    public record Level(int clients, int requests, int failed, long tokens, double seconds, double tokensPerSecond,
                        double ttftMedian, double ttftP99, double itlMedian, double itlP99) {}

    /** A repeated prompt's time to first token: the first time (computed) and the second (from the cache). */
    public record Repeat(int promptTokens, double coldMs, double warmMs) {}

    private final URI base;
    private final String model;
    private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    /**
     * Each streamed request on a connection of its own: llama-server closes a connection after a
     * stream, and a pooled client would send the next request into the closed one.
     */
    private static HttpClient freshClient() {
        return HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    }

    /** @param base the server's address, e.g. http://127.0.0.1:8080 */
    public LoadGenerator(URI base, String model) {
        this.base = base;
        this.model = model;
    }

    /** What one streamed request saw: nanosecond times of its tokens after the send. */
    private record Trace(boolean ok, long[] tokenNanos) {}

    private Trace stream(String prompt, int maxTokens) throws IOException, InterruptedException {
        ObjectNode body = JSON.createObjectNode();
        body.put("model", model);
        body.put("prompt", prompt);
        body.put("max_tokens", maxTokens);
        body.put("temperature", 0);
        body.put("stream", true);
        body.put("ignore_eos", true);
        HttpRequest request = HttpRequest.newBuilder(base.resolve("/v1/completions"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body.toString())).build();
        List<Long> times = new ArrayList<>();
        try (HttpClient http = freshClient()) {
            long t0 = System.nanoTime();
            HttpResponse<java.util.stream.Stream<String>> r = http.send(request, HttpResponse.BodyHandlers.ofLines());
            if (r.statusCode() != 200) {
                r.body().close();
                return new Trace(false, new long[0]);
            }
            Iterator<String> lines = r.body().iterator();
            while (lines.hasNext()) {
                String line = lines.next();
                if (!line.startsWith("data: ") || line.equals("data: [DONE]")) {
                    continue;
                }
                JsonNode chunk = JSON.readTree(line.substring(6));
                JsonNode choices = chunk.get("choices");
                if (choices != null && !choices.isEmpty() && !choices.get(0).path("text").asText("").isEmpty()) {
                    times.add(System.nanoTime() - t0);
                }
            }
        } catch (IOException e) {
            return new Trace(false, new long[0]); // counted as failed
        }
        return new Trace(true, times.stream().mapToLong(Long::longValue).toArray());
    }

    /** {@code clients} clients at once, {@code requests} streamed requests each. */
    public Level level(int clients, int requests, String text, int maxTokens) throws Exception {
        List<Future<List<Trace>>> futures = new ArrayList<>();
        long t0 = System.nanoTime();
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int c = 0; c < clients; c++) {
                int id = c;
                futures.add(pool.submit(() -> {
                    List<Trace> traces = new ArrayList<>();
                    for (int q = 0; q < requests; q++) {
                        traces.add(stream("Level " + clients + " request " + id + "-" + q + ". " + text, maxTokens));
                    }
                    return traces;
                }));
            }
            List<Double> ttft = new ArrayList<>();
            List<Double> itl = new ArrayList<>();
            long tokens = 0;
            int failed = 0;
            for (Future<List<Trace>> f : futures) {
                for (Trace t : f.get()) {
                    if (!t.ok() || t.tokenNanos().length == 0) {
                        failed++;
                        continue;
                    }
                    tokens += t.tokenNanos().length;
                    ttft.add(t.tokenNanos()[0] / 1e6);
                    for (int i = 1; i < t.tokenNanos().length; i++) {
                        itl.add((t.tokenNanos()[i] - t.tokenNanos()[i - 1]) / 1e6);
                    }
                }
            }
            double seconds = (System.nanoTime() - t0) / 1e9;
            return new Level(clients, clients * requests, failed, tokens, seconds, tokens / seconds,
                    percentile(ttft, 50), percentile(ttft, 99), percentile(itl, 50), percentile(itl, 99));
        }
    }

    /** The same prompt twice, one token each: the second can come from a prefix cache. */
    public Repeat repeat(String prompt) throws Exception {
        int tokens = tokenCount(prompt);
        Trace cold = stream(prompt, 1);
        Trace warm = stream(prompt, 1);
        if (!cold.ok() || !warm.ok() || cold.tokenNanos().length == 0 || warm.tokenNanos().length == 0) {
            throw new QlabException(base + ": the repeated prompt was not answered");
        }
        return new Repeat(tokens, cold.tokenNanos()[0] / 1e6, warm.tokenNanos()[0] / 1e6);
    }

    /** Tokens of a text by the server's /tokenize (llama-server and qlab both take {"content": text}). */
    public int tokenCount(String text) throws IOException, InterruptedException {
        ObjectNode body = JSON.createObjectNode();
        body.put("content", text);
        HttpResponse<String> r = client.send(HttpRequest.newBuilder(base.resolve("/tokenize"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body.toString())).build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            throw new QlabException(base + "/tokenize answered " + r.statusCode());
        }
        return JSON.readTree(r.body()).get("tokens").size();
    }

    static double percentile(List<Double> values, double p) {
        if (values.isEmpty()) {
            return Double.NaN;
        }
        double[] v = values.stream().mapToDouble(Double::doubleValue).toArray();
        Arrays.sort(v);
        // nearest rank
        int rank = (int) Math.ceil(p / 100.0 * v.length);
        return v[Math.max(0, Math.min(v.length - 1, rank - 1))];
    }
}
