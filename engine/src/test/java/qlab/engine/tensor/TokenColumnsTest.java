package qlab.engine.tensor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The transposed layout the tile reads, against its definition: token t's value of column k. */
class TokenColumnsTest {

    @Test
    void everyCellIsItsTokensValueAndThePaddingIsZero() {
        SplittableRandom r = new SplittableRandom(3);
        for (int cols : new int[] {1, 7, 37, 96}) {
            for (int tokens = 1; tokens <= 3 * TokenColumns.CHUNK + 1; tokens++) {
                int offset = 5;
                float[] x = new float[offset + tokens * cols];
                for (int i = 0; i < x.length; i++) {
                    x[i] = (float) r.nextGaussian();
                }
                TokenColumns c = TokenColumns.of(x, offset, cols, tokens);
                TokenColumns scalar = TokenColumns.ofScalar(x, offset, cols, tokens);
                for (int i = 0; i < c.values.length; i++) {
                    assertEquals(Float.floatToIntBits(scalar.values[i]), Float.floatToIntBits(c.values[i]),
                            cols + " cols, " + tokens + " tokens: gathers against the scalar reference, cell " + i);
                }
                for (int t = 0; t < tokens; t++) {
                    for (int k = 0; k < cols; k++) {
                        assertEquals(x[offset + t * cols + k], c.at(t, k), cols + " cols, " + tokens + " tokens");
                    }
                }
                int padded = (tokens + VectorSupport.LANES - 1) / VectorSupport.LANES * VectorSupport.LANES;
                assertEquals(padded * cols, c.values.length);
                double sum = 0;
                for (float v : c.values) {
                    sum += Math.abs(v);
                }
                double real = 0;
                for (int i = offset; i < x.length; i++) {
                    real += Math.abs(x[i]);
                }
                assertEquals(real, sum, 1e-9 * real, "nothing but the tokens' values, padding zero");
            }
        }
    }

    /** Codes × per-block scales, transposed in one pass: bitwise the products transposed by {@link TokenColumns#of}. */
    @Test
    void codesTimesBlockScalesEqualTheRoundedRowsTransposed() {
        SplittableRandom r = new SplittableRandom(4);
        for (int block : new int[] {20, 32, 128}) {
            for (int cols : new int[] {37, 160, 300}) {
                for (int tokens : new int[] {1, 8, 9, 16, 17, 40, 64, 70}) {
                    int blocksPerRow = (cols + block - 1) / block;
                    byte[] codes = new byte[tokens * cols];
                    float[] scales = new float[tokens * blocksPerRow];
                    for (int i = 0; i < codes.length; i++) {
                        codes[i] = (byte) (r.nextInt(255) - 127);
                    }
                    for (int i = 0; i < scales.length; i++) {
                        scales[i] = (float) r.nextDouble() * 0.01f;
                    }
                    float[] rounded = new float[tokens * cols];
                    for (int t = 0; t < tokens; t++) {
                        for (int k = 0; k < cols; k++) {
                            rounded[t * cols + k] = scales[t * blocksPerRow + k / block] * codes[t * cols + k];
                        }
                    }
                    TokenColumns want = TokenColumns.of(rounded, 0, cols, tokens);
                    TokenColumns got = TokenColumns.ofCodes(codes, scales, block, cols, tokens);
                    TokenColumns scalar = TokenColumns.ofCodesScalar(codes, scales, block, cols, tokens);
                    assertEquals(want.values.length, got.values.length);
                    assertEquals(want.values.length, scalar.values.length);
                    for (int i = 0; i < want.values.length; i++) {
                        assertEquals(Float.floatToIntBits(want.values[i]), Float.floatToIntBits(got.values[i]),
                                "block " + block + ", " + cols + " cols, " + tokens + " tokens, cell " + i);
                        assertEquals(Float.floatToIntBits(want.values[i]), Float.floatToIntBits(scalar.values[i]),
                                "scalar reference: block " + block + ", " + cols + " cols, " + tokens + " tokens, cell " + i);
                    }
                }
            }
        }
        assertThrows(IllegalArgumentException.class, () -> TokenColumns.ofCodes(new byte[0], new float[0], 32, 4, 0));
    }
}
