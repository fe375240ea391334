package qlab.engine.train;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import org.junit.jupiter.api.Test;
import qlab.engine.tensor.FloatKernels;

class AttentionKernelsTest {

    /** The engine's weightedRows as training calls it: weights at an offset; widths covering the four-, two- and one-vector paths and a scalar tail. */
    @Test
    void vectorPathIsBitwiseTheScalarFoldAndTheEngineKernel() {
        for (int n : new int[] {1, 7, 16, 32, 48, 64, 80, 131}) {
            for (int rows : new int[] {0, 1, 3, 40}) {
                int stride = n + 9;
                float[] x = BlockedProductsTest.random(rows * stride + 5, n * 31L + rows);
                float[] w = BlockedProductsTest.random(rows + 3, rows + 2);
                float[] fast = BlockedProductsTest.random(n + 4, 3);
                float[] scalar = fast.clone();
                float[] engine = fast.clone();
                FloatKernels.weightedRows(w, 3, rows, 0.77f, x, 5, stride, fast, 2, n);
                FloatKernels.weightedRowsScalar(w, 3, rows, 0.77f, x, 5, stride, scalar, 2, n);
                FloatKernels.weightedRows(java.util.Arrays.copyOfRange(w, 3, w.length), 0, rows, 0.77f, x, 5, stride, engine, 2, n);
                assertArrayEquals(scalar, fast, n + " wide, " + rows + " rows");
                assertArrayEquals(engine, fast, n + " wide, " + rows + " rows (engine kernel)");
            }
        }
    }

    @Test
    void columnDotsAreBitwiseTheScalarFold() {
        for (int hd : new int[] {2, 8, 32, 64}) {
            for (int count : new int[] {0, 1, 15, 16, 17, 64, 71, 130}) {
                int ld = count + 5;
                float[] kT = BlockedProductsTest.random(hd * ld, hd * 7L + count);
                float[] q = BlockedProductsTest.random(hd + 3, count);
                float[] fast = BlockedProductsTest.random(count + 2, 1);
                float[] scalar = fast.clone();
                AttentionKernels.columnDots(q, 3, kT, ld, hd, count, fast, 2);
                AttentionKernels.columnDotsScalar(q, 3, kT, ld, hd, 0, count, scalar, 2);
                assertArrayEquals(scalar, fast, hd + " dims, " + count + " keys");
                for (int j = 0; j < count; j++) {
                    double exact = 0;
                    for (int i = 0; i < hd; i++) {
                        exact += (double) q[3 + i] * kT[i * ld + j];
                    }
                    org.junit.jupiter.api.Assertions.assertEquals(exact, fast[2 + j], 1e-5);
                }
            }
        }
    }
}
