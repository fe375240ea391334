package qlab.engine.tensor;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class TokenTileTest {

    /**
     * Six- and twelve-row panels (AVX2's and AVX-512's choice for wide batches), both run here
     * whatever the machine: every cell bitwise the scalar fma fold, whatever the row split, for
     * batches of one vector or less, whole chunks, and a short last chunk, with partial panels and
     * more rows than one pass of {@link TokenTile#GROUP} panels.
     */
    @Test
    void bothPanelHeightsGiveEveryCellItsScalarFold() {
        int lanes = VectorSupport.LANES;
        int checks = 0;
        for (int cols : new int[] {1, 33, 130}) {
            for (int rows : new int[] {1, 6, 13, 25, 12 * TokenTile.GROUP + 13}) {
                for (int tokens : new int[] {1, lanes - 1, lanes + 1, 2 * lanes, 2 * lanes + 3, 5 * lanes + 1}) {
                    SplittableRandom r = new SplittableRandom(cols * 131L + rows * 17L + tokens);
                    float[] w = new float[rows * cols];
                    float[] x = new float[tokens * cols];
                    for (int i = 0; i < w.length; i++) {
                        w[i] = (float) r.nextDouble(-1, 1);
                    }
                    for (int i = 0; i < x.length; i++) {
                        x[i] = (float) r.nextDouble(-2, 2);
                    }
                    TokenColumns columns = TokenColumns.of(x, 0, cols, tokens);
                    TokenTile.RowSource source = (row, dst, offset) -> System.arraycopy(w, row * cols, dst, offset, cols);
                    int stride = rows + 3;
                    for (boolean twelve : new boolean[] {false, true}) {
                        float[] y = new float[tokens * stride];
                        Arrays.fill(y, Float.NaN);
                        TokenTile.rows(source, cols, 0, rows, columns, y, 2, stride, twelve);
                        float[] split = new float[tokens * stride];
                        int cut = rows / 2;
                        TokenTile.rows(source, cols, 0, cut, columns, split, 2, stride, twelve);
                        TokenTile.rows(source, cols, cut, rows, columns, split, 2, stride, twelve);
                        for (int t = 0; t < tokens; t++) {
                            for (int row = 0; row < rows; row++) {
                                String where = (twelve ? "12" : "6") + "-row panels, " + cols + " cols, " + rows
                                        + " rows, " + tokens + " tokens, cell " + row + "," + t;
                                int expected = Float.floatToIntBits(TokenTile.cellScalar(w, row * cols, columns, t));
                                assertEquals(expected, Float.floatToIntBits(y[t * stride + 2 + row]), where);
                                assertEquals(expected, Float.floatToIntBits(split[t * stride + 2 + row]), where + ", split");
                                checks++;
                            }
                        }
                    }
                }
            }
        }
        assertEquals(2 * 3 * (1 + 6 + 13 + 25 + 12 * TokenTile.GROUP + 13) * (1 + (lanes - 1) + (lanes + 1) + 2 * lanes + (2 * lanes + 3) + (5 * lanes + 1)),
                checks);
    }
}
