package qlab.serve;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(120)
class LoadGeneratorTest {

    @Test
    void countsWhatTheClientsReceived() throws Exception {
        try (DemoServer s = new DemoServer(4, 8, 8L << 20, 1 << 20, null)) {
            LoadGenerator gen = new LoadGenerator(URI.create("http://127.0.0.1:" + s.server.port()), "demo");
            String text = ServeEndpointsTest.prose(400);
            LoadGenerator.Level l = gen.level(4, 2, text, 8);
            assertEquals(8, l.requests());
            assertEquals(0, l.failed());
            assertEquals(8 * 8, l.tokens(), "ignore_eos: every request runs its eight tokens");
            assertEquals(64, s.metric("qlab_generated_tokens_total"));
            assertTrue(l.ttftMedian() > 0 && l.ttftP99() >= l.ttftMedian());
            assertTrue(l.itlMedian() > 0 && l.itlP99() >= l.itlMedian());
            LoadGenerator.Repeat r = gen.repeat("Once. " + text);
            assertEquals(DemoServer.tokenizer().encode("Once. " + text).length, r.promptTokens());
            assertEquals(r.promptTokens(), s.metric("qlab_prefix_cache_reused_tokens_total"),
                    "the second send came whole from the cache");
        }
    }

    @Test
    void nearestRankPercentiles() {
        java.util.List<Double> v = java.util.List.of(5.0, 1.0, 4.0, 2.0, 3.0);
        assertEquals(3.0, LoadGenerator.percentile(v, 50));
        assertEquals(5.0, LoadGenerator.percentile(v, 99));
        assertEquals(1.0, LoadGenerator.percentile(v, 1));
    }
}
