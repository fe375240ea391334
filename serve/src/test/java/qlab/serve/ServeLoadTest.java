package qlab.serve;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * 64 clients at once against 2 slots and a queue of 8, over loopback, a bounded number of
 * requests each: every request is answered 200 or 429, every 200 carries its own prompt, and
 * /metrics counts what the clients counted.
 */
@Timeout(240)
class ServeLoadTest {

    static final int CLIENTS = 64;
    static final int ROUNDS = 3;

    @Test
    void sixtyFourClients() throws Exception {
        try (DemoServer s = new DemoServer(2, 8, 8L << 20, 1 << 20, null)) {
            AtomicInteger ok = new AtomicInteger();
            AtomicInteger busy = new AtomicInteger();
            CountDownLatch go = new CountDownLatch(1);
            ExecutorService pool = Executors.newFixedThreadPool(CLIENTS);
            List<Future<?>> clients = new ArrayList<>();
            for (int c = 0; c < CLIENTS; c++) {
                int client = c;
                clients.add(pool.submit(() -> {
                    go.await();
                    for (int round = 0; round < ROUNDS; round++) {
                        String prompt = "Client " + client + " asks question " + round + ":";
                        HttpResponse<String> r = s.post("/v1/completions", DemoServer.JSON.writeValueAsString(
                                ServeEndpointsTest.body("prompt", prompt, "max_tokens", 4, "temperature", 0.5,
                                        "seed", client, "echo", true)));
                        if (r.statusCode() == 429) {
                            assertTrue(r.headers().firstValue("Retry-After").isPresent());
                            assertEquals("rate_limit_exceeded",
                                    DemoServer.JSON.readTree(r.body()).get("error").get("code").asText());
                            busy.incrementAndGet();
                            continue;
                        }
                        assertEquals(200, r.statusCode(), r.body());
                        JsonNode choice = DemoServer.JSON.readTree(r.body()).get("choices").get(0);
                        assertTrue(choice.get("text").asText().startsWith(prompt), "its own prompt: " + choice);
                        ok.incrementAndGet();
                    }
                    return null;
                }));
            }
            go.countDown();
            for (Future<?> f : clients) {
                f.get();
            }
            pool.shutdown();
            assertEquals(CLIENTS * ROUNDS, ok.get() + busy.get());
            assertTrue(ok.get() >= 2 + 8, "at least the slots and the queue are served: " + ok.get());
            assertTrue(busy.get() > 0, "64 clients overflow 2 slots and a queue of 8");
            assertEquals(ok.get(), s.metric("qlab_requests_total{route=\"/v1/completions\",status=\"200\"}"));
            assertEquals(busy.get(), s.metric("qlab_requests_total{route=\"/v1/completions\",status=\"429\"}"));
            assertEquals(0, s.metric("qlab_running_sequences"));
            assertEquals(0, s.metric("qlab_queue_depth"));
            assertEquals(0, s.metric("qlab_kv_cache_bytes"));
            assertEquals(4 * ok.get(), s.metric("qlab_generated_tokens_total"), "four tokens per answered request "
                    + "(the demo's stop tokens end none this early at these seeds)");
        }
    }
}
