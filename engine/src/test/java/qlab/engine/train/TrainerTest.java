package qlab.engine.train;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import qlab.engine.QlabException;
import qlab.engine.model.ModelConfig;
import qlab.engine.safetensors.DType;
import qlab.engine.util.WorkerPool;

class TrainerTest {

    static final ModelConfig CONFIG = new ModelConfig(32, 64, 2, 4, 2, 8, 48, 1e-6, 10000.0, true, 64, "float32");

    /**
     * A learnable stream: each token a fixed function of the two before it (so attention has to
     * look back), one token in twenty random.
     */
    static int[] stream(int length, long seed) {
        SplitMix64 r = new SplitMix64(seed);
        int v = CONFIG.vocabSize();
        int[] t = new int[length];
        t[1] = 1;
        for (int i = 2; i < length; i++) {
            t[i] = r.nextInt(20) == 0 ? r.nextInt(v) : (t[i - 1] * 7 + t[i - 2] * 3 + 1) % v;
        }
        return t;
    }

    static TrainOptions options(int steps) {
        return new TrainOptions(steps, 128, 16, 1e-2, 20, 0.1, 5, 0.1, 1.0, 50, 64, 10, 64);
    }

    static byte[] weights(Trainer t, Path dir, String name) throws Exception {
        Path f = dir.resolve(name);
        t.parameters().writeSafetensors(f, DType.F32);
        return Files.readAllBytes(f);
    }

    @Test
    void lossComesDownSteadily() {
        int[] train = stream(20_000, 1);
        int[] val = stream(2_000, 2);
        try (WorkerPool pool = new WorkerPool(2)) {
            Trainer t = Trainer.start(CONFIG, options(300), train, val, pool);
            t.run(300, null, null);
            List<Trainer.Point> h = t.history();
            assertEquals(300, h.size());
            // Moving averages over windows of 50 steps: each below the one before (once at the
            // stream's noise floor, a batch's noise may lift one by a hair: 1% is allowed).
            double previous = Double.POSITIVE_INFINITY;
            for (int w = 0; w < 6; w++) {
                double avg = h.subList(w * 50, w * 50 + 50).stream().mapToDouble(Trainer.Point::trainLoss).average().orElseThrow();
                assertTrue(avg < previous * 1.01, "window " + w + ": moving average " + avg + " after " + previous);
                previous = Math.min(previous, avg);
            }
            double first = h.getFirst().trainLoss();
            assertEquals(Math.log(CONFIG.vocabSize()), first, 0.2, "a fresh model is near uniform");
            assertTrue(previous < 0.7 * first, "last 50 steps average " + previous + ", first loss " + first);
            List<Trainer.Eval> evals = t.evals();
            assertTrue(evals.getLast().valLoss() < 0.7 * first, "validation loss " + evals.getLast().valLoss());
        }
    }

    @Test
    void sameSeedSameBytesWhateverTheThreads(@TempDir Path dir) throws Exception {
        int[] train = stream(5_000, 3);
        int[] val = stream(500, 4);
        byte[] one;
        try (WorkerPool pool = new WorkerPool(1)) {
            Trainer t = Trainer.start(CONFIG, options(12), train, val, pool);
            t.run(12, null, null);
            one = weights(t, dir, "one.safetensors");
        }
        try (WorkerPool pool = new WorkerPool(2)) {
            Trainer t = Trainer.start(CONFIG, options(12), train, val, pool);
            t.run(12, null, null);
            assertArrayEquals(one, weights(t, dir, "two.safetensors"));
            Trainer again = Trainer.start(CONFIG, options(12), train, val, pool);
            again.run(12, null, null);
            assertArrayEquals(one, weights(again, dir, "again.safetensors"));
        }
    }

    @Test
    void resumedRunEqualsTheUninterruptedOne(@TempDir Path dir) throws Exception {
        // 4 096 training tokens are 255 windows of 16: 30 steps of 8 sequences pass an epoch boundary.
        int[] train = stream(4_096, 5);
        int[] val = stream(500, 6);
        Path ckpt = dir.resolve("checkpoint.safetensors");
        try (WorkerPool pool = new WorkerPool(2)) {
            Trainer whole = Trainer.start(CONFIG, options(60), train, val, pool);
            whole.run(60, null, null);

            Trainer first = Trainer.start(CONFIG, options(60), train, val, pool);
            first.run(37, ckpt, null); // "killed" after step 37; its last checkpoint is step 30
            Trainer resumed = Trainer.resume(ckpt, CONFIG, options(60), train, val, pool);
            assertEquals(30, resumed.step());
            resumed.run(60, ckpt, null);

            assertArrayEquals(weights(whole, dir, "whole.safetensors"), weights(resumed, dir, "resumed.safetensors"));
            assertEquals(whole.history(), resumed.history());
            assertEquals(whole.evals(), resumed.evals());
        }
    }

    /** Random tokens: nothing to learn that carries over to another random stream, only to memorise. */
    static int[] noise(int length, long seed) {
        SplitMix64 r = new SplitMix64(seed);
        int[] t = new int[length];
        for (int i = 0; i < length; i++) {
            t[i] = r.nextInt(CONFIG.vocabSize());
        }
        return t;
    }

    @Test
    void bestWeightsAreThoseOfTheLowestValidationLossAndSurviveAResume(@TempDir Path dir) throws Exception {
        // Memorising 300 random tokens lifts the loss on other random tokens: the best is an early step.
        int[] train = noise(300, 11);
        int[] val = noise(400, 12);
        TrainOptions o = new TrainOptions(60, 128, 16, 1e-2, 5, 0.0, 5, 0.1, 1.0, 5, 64, 10, 64);
        Path ckpt = dir.resolve("checkpoint.safetensors");
        try (WorkerPool pool = new WorkerPool(2)) {
            Trainer whole = Trainer.start(CONFIG, o, train, val, pool);
            whole.run(60, null, null);
            Trainer.Eval best = whole.bestEval();
            double min = whole.evals().stream().mapToDouble(Trainer.Eval::valLoss).min().orElseThrow();
            assertEquals(min, best.valLoss());
            assertTrue(best.step() < 60, "the validation loss should rise while the noise is memorised; best at " + best.step());

            // The best weights are the weights right after that step.
            Trainer upTo = Trainer.start(CONFIG, o, train, val, pool);
            upTo.run(best.step(), null, null);
            Path a = dir.resolve("best.safetensors");
            Path b = dir.resolve("upto.safetensors");
            whole.bestParameters().writeSafetensors(a, DType.F32);
            upTo.parameters().writeSafetensors(b, DType.F32);
            assertArrayEquals(Files.readAllBytes(b), Files.readAllBytes(a));

            // Killed after a checkpoint past the best step, resumed: the same best weights.
            Trainer first = Trainer.start(CONFIG, o, train, val, pool);
            first.run(best.step() + 12, ckpt, null);
            Trainer resumed = Trainer.resume(ckpt, CONFIG, o, train, val, pool);
            resumed.run(60, ckpt, null);
            assertEquals(best, resumed.bestEval());
            Path c = dir.resolve("resumed-best.safetensors");
            resumed.bestParameters().writeSafetensors(c, DType.F32);
            assertArrayEquals(Files.readAllBytes(a), Files.readAllBytes(c));
        }
    }

    @Test
    void resumeRefusesOtherOptions(@TempDir Path dir) {
        int[] train = stream(2_000, 7);
        int[] val = stream(300, 8);
        Path ckpt = dir.resolve("checkpoint.safetensors");
        try (WorkerPool pool = new WorkerPool(1)) {
            Trainer.start(CONFIG, options(20), train, val, pool).run(10, ckpt, null);
            QlabException e = assertThrows(QlabException.class,
                    () -> Trainer.resume(ckpt, CONFIG, options(25), train, val, pool));
            assertTrue(e.getMessage().contains("options.steps"), e.getMessage());
        }
    }

    @Test
    void scheduleWarmsUpThenDecays() {
        TrainOptions o = new TrainOptions(100, 128, 16, 1e-3, 10, 0.1, 1, 0.1, 1.0, 10, 0, 10, 128);
        assertEquals(1e-4, o.learningRate(0), 1e-12);
        assertEquals(1e-3, o.learningRate(9), 1e-12);
        assertEquals(1e-3, o.learningRate(10), 1e-12);
        assertEquals(1e-4, o.learningRate(99), 1e-12);
        for (int s = 11; s < 100; s++) {
            assertTrue(o.learningRate(s) < o.learningRate(s - 1));
        }
    }
}
