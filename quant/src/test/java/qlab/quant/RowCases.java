package qlab.quant;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Random;

/** Weight rows for the kernel tests: Gaussian and the adversarial kinds. */
enum RowCases {
    GAUSSIAN, ZEROS, ONE_HUGE_OUTLIER, DENORMALS, TINY;

    float[] row(int cols, long seed) {
        Random rnd = new Random(seed);
        float[] r = new float[cols];
        for (int j = 0; j < cols; j++) {
            r[j] = switch (this) {
                case GAUSSIAN, ONE_HUGE_OUTLIER -> (float) rnd.nextGaussian() * 0.05f;
                case ZEROS -> 0f;
                // Subnormal f32 values (below 2^-126 ≈ 1.2e-38).
                case DENORMALS -> (float) rnd.nextGaussian() * 1e-40f;
                case TINY -> (float) rnd.nextGaussian() * 1e-7f;
            };
        }
        if (this == ONE_HUGE_OUTLIER) {
            r[rnd.nextInt(cols)] = 1000f;
        }
        return r;
    }

    static float[] gaussian(int n, long seed) {
        Random rnd = new Random(seed);
        float[] r = new float[n];
        for (int j = 0; j < n; j++) {
            r[j] = (float) rnd.nextGaussian();
        }
        return r;
    }

    /**
     * Quantizes rows into a fresh native segment that starts {@code misalign} bytes past a 64-byte
     * boundary, so kernels are exercised on unaligned data too.
     */
    static MemorySegment quantize(QuantFormat format, float[][] rows, int cols, float[] importance, int misalign) {
        long rowBytes = format.bytesPerRow(cols);
        MemorySegment seg = Arena.ofAuto().allocate(rows.length * rowBytes + misalign, 64)
                .asSlice(misalign, rows.length * rowBytes);
        for (int r = 0; r < rows.length; r++) {
            format.quantizeRow(rows[r], 0, cols, importance, seg, r * rowBytes);
        }
        return seg;
    }
}
