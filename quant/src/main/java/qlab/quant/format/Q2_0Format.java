package qlab.quant.format;

import qlab.quant.kernel.CodeGrid;

/**
 * q2_0: 2-bit levels −3, −1, 1, 3 (codes 0..3), scale by least squares from 0.4979·RMS; an fp16 scale per group of g values (32 or 128).
 * Row: fp16 d × ceil(cols/g) | codes × cols rounded up to 32.
 * At g = 32: (2 + 8) B / 32 weights = 2.5 bpw; g = 128: (2 + 32) B / 128 = 2.125.
 */
public final class Q2_0Format extends BlockCodeFormat {
    public static final int DEFAULT_GROUP = 32;

    public Q2_0Format(int group) {
        super("q2_0", group, DEFAULT_GROUP, CodeGrid.Q2, ScaleRule.LEAST_SQUARES, new ScaleLayout.Fp16PerBlock(group));
    }
}
