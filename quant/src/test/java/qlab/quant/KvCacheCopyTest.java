package qlab.quant;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import qlab.engine.model.KvCache;
import qlab.engine.model.KvTypes;
import qlab.engine.model.Model;
import qlab.engine.model.Transformer;
import qlab.engine.testing.TestModels;
import qlab.engine.util.WorkerPool;

/**
 * Positions copied out of one KV cache and appended to another (how a server reuses a computed
 * prefix) continue exactly as the cache they came from, in every cache type.
 */
class KvCacheCopyTest {

    @TempDir
    static Path tmp;

    @ParameterizedTest
    @ValueSource(strings = {"f32", "f16", "q8_0", "q4_0"})
    void copiedPositionsContinueBitForBit(String type) {
        Model model = TestModels.write(KvCacheTypesTest.family("qwen2"), 3, tmp.resolve("copy-" + type));
        KvTypes kv = KvFormats.of(type, type);
        int vocab = model.config().vocabSize();
        int[] prompt = new SplittableRandom(5).ints(40, 0, vocab).toArray();
        try (WorkerPool pool = new WorkerPool(2)) {
            Transformer tf = new Transformer(model, pool, kv);
            KvCache source = tf.newCache(64);
            tf.forward(Arrays.copyOf(prompt, 32), source, 31);
            tf.forward(Arrays.copyOfRange(prompt, 32, 40), source, 7);

            KvCache copy = tf.newCache(64);
            KvCache.Positions first = source.copyOut(0, 32);
            KvCache.Positions rest = source.copyOut(32, 8);
            copy.append(first);
            copy.append(rest);
            assertEquals(40, copy.length());
            assertEquals(first.byteSize() * 8 / 32, rest.byteSize());

            int[] next = {7};
            assertArrayEquals(tf.forward(next, source, 0), tf.forward(next, copy, 0));
            assertThrows(IllegalArgumentException.class, () -> source.copyOut(30, 20));
        }
    }
}
