package qlab.engine.train;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import qlab.engine.util.WorkerPool;

class BlockedProductsTest {

    /** Uniform in [-1, 1), from a seed. */
    static float[] random(int n, long seed) {
        SplitMix64 r = new SplitMix64(seed);
        float[] a = new float[n];
        for (int i = 0; i < n; i++) {
            a[i] = (float) (r.nextDouble() * 2 - 1);
        }
        return a;
    }

    /** Odd sizes: row tiles and single rows, two-vector, one-vector and scalar column tails, several k blocks. */
    @ParameterizedTest
    @CsvSource({"1, 1, 1", "12, 32, 16", "29, 300, 53", "37, 517, 96", "5, 7, 17", "24, 256, 33"})
    void dXIsBitwiseTheScalarFold(int n, int out, int in) {
        float[] dy = random(n * out, 1);
        float[] w = random(out * in, 2);
        float[] expected = new float[n * in];
        BlockedProducts.productScalar(dy, 0, out, 1, w, in, expected, in, n, out, in, false, 0, n);
        for (int threads : new int[] {1, 2, 3}) {
            try (WorkerPool pool = new WorkerPool(threads)) {
                float[] got = random(n * in, 9); // overwritten
                BlockedProducts.dX(dy, w, got, n, out, in, pool);
                assertArrayEquals(expected, got, threads + " threads");
            }
        }
    }

    @ParameterizedTest
    @CsvSource({"1, 1, 1", "32, 12, 16", "300, 29, 53", "517, 37, 96", "7, 5, 17", "600, 24, 33"})
    void dWAccumulatesBitwiseTheScalarFold(int n, int out, int in) {
        float[] dy = random(n * out, 3);
        float[] x = random(n * in, 4);
        float[] start = random(out * in, 5);
        float[] expected = start.clone();
        BlockedProducts.productScalar(dy, 0, 1, out, x, in, expected, in, out, n, in, true, 0, out);
        for (int threads : new int[] {1, 2}) {
            try (WorkerPool pool = new WorkerPool(threads)) {
                float[] got = start.clone();
                BlockedProducts.dW(dy, x, got, n, out, in, pool);
                assertArrayEquals(expected, got, threads + " threads");
            }
        }
    }

    @ParameterizedTest
    @CsvSource({"1, 1, 1", "40, 64, 48", "29, 53, 300", "64, 17, 33"})
    void forwardIsTheScalarFoldOnTheTransposeAndTheEngineProductWithinRounding(int n, int out, int in) {
        float[] x = random(n * in, 10);
        float[] w = random(out * in, 11);
        float[] engine = new float[n * out];
        new qlab.engine.tensor.F32Matrix(w, out, in).matmulScalar(x, n, engine, out, 0, 0, out);
        for (int threads : new int[] {1, 2}) {
            try (WorkerPool pool = new WorkerPool(threads)) {
                float[] wt = new float[in * out];
                BlockedProducts.transpose(w, out, in, wt, pool);
                for (int o = 0; o < out; o++) {
                    for (int i = 0; i < in; i++) {
                        assertEquals(w[o * in + i], wt[i * out + o]);
                    }
                }
                float[] expected = new float[n * out];
                BlockedProducts.productScalar(x, 0, in, 1, wt, out, expected, out, n, in, out, false, 0, n);
                float[] got = random(n * out, 12);
                BlockedProducts.forward(x, wt, got, n, in, out, pool);
                assertArrayEquals(expected, got, threads + " threads");
                assertArrayEquals(engine, got, 1e-4f);
            }
        }
    }

    @ParameterizedTest
    @CsvSource({"29, 300, 53"})
    void scalarFoldIsTheProductWithinRounding(int m, int k, int cols) {
        float[] a = random(m * k, 6);
        float[] b = random(k * cols, 7);
        float[] c = new float[m * cols];
        BlockedProducts.productScalar(a, 0, k, 1, b, cols, c, cols, m, k, cols, false, 0, m);
        float[] exact = new float[m * cols];
        for (int r = 0; r < m; r++) {
            for (int j = 0; j < cols; j++) {
                double s = 0;
                for (int kk = 0; kk < k; kk++) {
                    s += (double) a[r * k + kk] * b[kk * cols + j];
                }
                exact[r * cols + j] = (float) s;
            }
        }
        assertArrayEquals(exact, c, 1e-4f);
    }
}
