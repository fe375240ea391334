package qlab.serve;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Arrays;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import qlab.engine.model.KvCache;
import qlab.engine.model.KvTypes;
import qlab.quant.KvFormats;
import qlab.engine.model.ModelConfig;

@Timeout(180)
class PrefixCacheTest {

    /** A prompt whose whole blocks were computed before runs on from the last one, and gives what it gives cold. */
    @Test
    void aHitGivesTheTokensOfACold() throws Exception {
        hitAgainstCold(KvTypes.F32);
    }

    /** The same with an encoded KV cache (q8_0 keys, q4_0 values): blocks are copied as the cache stores them. */
    @Test
    void aHitGivesTheTokensOfAColdWithEncodedKv() throws Exception {
        hitAgainstCold(KvFormats.of("q8_0", "q4_0"));
    }

    private static void hitAgainstCold(KvTypes kvTypes) throws Exception {
        int[] all = DemoServer.tokenizer().encode(ServeEndpointsTest.prose(1200));
        int[] first = Arrays.copyOf(all, 130);
        int[] longer = Arrays.copyOf(all, 230);
        try (DemoServer cached = new DemoServer(4, 16, 64L << 20, 1 << 20, null, 512, kvTypes);
             DemoServer cold = new DemoServer(4, 16, 0, 1 << 20, null, 512, kvTypes)) {
            Map<String, Object> r1 = ServeEndpointsTest.body("prompt", first, "max_tokens", 16, "temperature", 0.7,
                    "seed", 5, "logprobs", 2);
            Map<String, Object> r2 = ServeEndpointsTest.body("prompt", longer, "max_tokens", 16, "temperature", 0.7,
                    "seed", 5, "logprobs", 2);
            assertEquals(0, cached.ok("/v1/completions", r1).get("usage").get("prompt_tokens_details").get("cached_tokens").asInt());
            JsonNode hit = cached.ok("/v1/completions", r2);
            assertEquals(128, hit.get("usage").get("prompt_tokens_details").get("cached_tokens").asInt(),
                    "the first prompt's four whole blocks");
            JsonNode repeat = cached.ok("/v1/completions", r2);
            assertEquals(230, repeat.get("usage").get("prompt_tokens_details").get("cached_tokens").asInt(),
                    "a repeated prompt comes whole");
            JsonNode reference = cold.ok("/v1/completions", r2);
            assertEquals(0, reference.get("usage").get("prompt_tokens_details").get("cached_tokens").asInt());
            for (JsonNode r : new JsonNode[] {hit, repeat}) {
                assertEquals(reference.get("choices").get(0).get("text"), r.get("choices").get(0).get("text"));
                assertEquals(reference.get("choices").get(0).get("logprobs").get("token_logprobs"),
                        r.get("choices").get(0).get("logprobs").get("token_logprobs"));
            }
            assertEquals(2, cached.metric("qlab_prefix_cache_hits_total"));
            assertEquals(128 + 230, cached.metric("qlab_prefix_cache_reused_tokens_total"));
            assertTrue(cached.metric("qlab_prefix_cache_bytes") > 0);
            assertEquals(0, cold.metric("qlab_prefix_cache_bytes"));
        }
    }

    /** Least recently used entries go first, and the budget is never exceeded. */
    @Test
    void evictsLeastRecentlyUsedUnderTheBudget() {
        ModelConfig config = DemoServer.model().config();
        int vocab = config.vocabSize();
        KvCache kv = new KvCache(config, 64);
        kv.advance(64);
        long block = kv.copyOut(0, PrefixCache.BLOCK_TOKENS).byteSize() + 64;
        long end = 4L * vocab + 64; // a prompt of exactly two blocks: an end with no KV, its logits
        PrefixCache cache = new PrefixCache(2 * (2 * block + end));
        int[][] prompts = new int[3][64];
        for (int p = 0; p < 3; p++) {
            Arrays.fill(prompts[p], p + 1);
        }
        float[] logits = new float[vocab];
        cache.store(prompts[0], kv, logits);
        cache.store(prompts[1], kv, logits);
        assertEquals(6, cache.entries());
        assertNotNull(cache.lookup(prompts[0]).end()); // prompt 0 is now the most recent
        cache.store(prompts[2], kv, logits);           // evicts prompt 1's entries
        assertTrue(cache.bytes() <= 2 * (2 * block + end));
        assertNull(cache.lookup(prompts[1]).end());
        assertEquals(0, cache.lookup(prompts[1]).blocks().length);
        assertNotNull(cache.lookup(prompts[0]).end());
        assertNotNull(cache.lookup(prompts[2]).end());
        assertEquals(64, cache.lookup(prompts[2]).tokens());
    }
}
