package qlab.serve;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/** The counters and gauges /metrics reports, in Prometheus' text format (version 0.0.4). */
public final class ServerMetrics {

    private final Map<String, LongAdder> requests = new ConcurrentHashMap<>();
    final LongAdder promptTokens = new LongAdder();
    final LongAdder generatedTokens = new LongAdder();
    final LongAdder prefixHits = new LongAdder();
    final LongAdder prefixReusedTokens = new LongAdder();
    final LongAdder cancelled = new LongAdder();
    final AtomicLong decodeNanos = new AtomicLong();
    final AtomicLong prefillNanos = new AtomicLong();
    final LongAdder prefillTokens = new LongAdder();
    volatile int queueDepth;
    volatile int running;
    volatile long kvBytes;
    volatile long prefixCacheBytes;

    /** Counts one answered request by route and status code. */
    void request(String route, int status) {
        requests.computeIfAbsent(route + "\u0000" + status, k -> new LongAdder()).increment();
    }

    /** Requests answered on a route with a status, for tests. */
    public long requests(String route, int status) {
        LongAdder a = requests.get(route + "\u0000" + status);
        return a == null ? 0 : a.sum();
    }

    String render() {
        StringBuilder out = new StringBuilder();
        out.append("# HELP qlab_requests_total HTTP requests answered, by route and status code.\n");
        out.append("# TYPE qlab_requests_total counter\n");
        new TreeMap<>(requests).forEach((k, v) -> {
            String[] parts = k.split("\u0000");
            out.append("qlab_requests_total{route=\"").append(parts[0]).append("\",status=\"").append(parts[1])
                    .append("\"} ").append(v.sum()).append('\n');
        });
        counter(out, "qlab_prompt_tokens_total", "Prompt tokens of admitted sequences.", promptTokens.sum());
        counter(out, "qlab_generated_tokens_total", "Tokens generated.", generatedTokens.sum());
        counter(out, "qlab_prefill_tokens_total", "Prompt tokens run through the model (not taken from the prefix cache).",
                prefillTokens.sum());
        counter(out, "qlab_prefix_cache_hits_total", "Sequences that reused cached prompt KV.", prefixHits.sum());
        counter(out, "qlab_prefix_cache_reused_tokens_total", "Prompt tokens whose KV came from the prefix cache.",
                prefixReusedTokens.sum());
        counter(out, "qlab_cancelled_total", "Sequences cancelled because their client went away.", cancelled.sum());
        double decodeSeconds = decodeNanos.get() / 1e9;
        gauge(out, "qlab_decode_tokens_per_second", "Generated tokens per second of decode steps since start.",
                decodeSeconds > 0 ? generatedTokens.sum() / decodeSeconds : 0);
        double prefillSeconds = prefillNanos.get() / 1e9;
        gauge(out, "qlab_prefill_tokens_per_second", "Prompt tokens per second of prefill passes since start.",
                prefillSeconds > 0 ? prefillTokens.sum() / prefillSeconds : 0);
        gauge(out, "qlab_queue_depth", "Requests waiting for a slot.", queueDepth);
        gauge(out, "qlab_running_sequences", "Sequences holding a slot.", running);
        gauge(out, "qlab_kv_cache_bytes", "Bytes of KV held by running sequences.", kvBytes);
        gauge(out, "qlab_prefix_cache_bytes", "Bytes held by the prefix cache.", prefixCacheBytes);
        return out.toString();
    }

    private static void counter(StringBuilder out, String name, String help, long value) {
        out.append("# HELP ").append(name).append(' ').append(help).append('\n');
        out.append("# TYPE ").append(name).append(" counter\n");
        out.append(name).append(' ').append(value).append('\n');
    }

    private static void gauge(StringBuilder out, String name, String help, double value) {
        out.append("# HELP ").append(name).append(' ').append(help).append('\n');
        out.append("# TYPE ").append(name).append(" gauge\n");
        out.append(name).append(' ').append(value == Math.rint(value) ? Long.toString((long) value) : Double.toString(value))
                .append('\n');
    }
}
