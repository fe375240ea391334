package qlab.engine.train;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import org.junit.jupiter.api.Test;
import qlab.engine.tensor.FloatKernels;

class RowSumsTest {

    /** Widths covering the four-, two- and one-vector paths and a scalar tail; weights at an offset. */
    @Test
    void vectorPathIsBitwiseTheScalarFoldAndTheEngineKernel() {
        for (int n : new int[] {1, 7, 16, 32, 48, 64, 80, 131}) {
            for (int rows : new int[] {0, 1, 3, 40}) {
                int stride = n + 9;
                float[] x = BackwardProductsTest.random(rows * stride + 5, n * 31L + rows);
                float[] w = BackwardProductsTest.random(rows + 3, rows + 2);
                float[] fast = BackwardProductsTest.random(n + 4, 3);
                float[] scalar = fast.clone();
                float[] engine = fast.clone();
                RowSums.weightedRows(w, 3, rows, 0.77f, x, 5, stride, fast, 2, n);
                RowSums.weightedRowsScalar(w, 3, rows, 0.77f, x, 5, stride, scalar, 2, n);
                FloatKernels.weightedRows(java.util.Arrays.copyOfRange(w, 3, w.length), rows, 0.77f, x, 5, stride, engine, 2, n);
                assertArrayEquals(scalar, fast, n + " wide, " + rows + " rows");
                assertArrayEquals(engine, fast, n + " wide, " + rows + " rows (engine kernel)");
            }
        }
    }
}
