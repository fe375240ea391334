package qlab.quant.format;

import qlab.quant.kernel.CodeGrid;

/**
 * tq2_0: ternary levels −1, 0, 1 in 2-bit codes, scale by least squares from 1.224·RMS; an fp16 scale per group of g values (32 or 128).
 * Row: fp16 d × ceil(cols/g) | codes × cols rounded up to 32.
 * At g = 32: (2 + 8) B / 32 weights = 2.5 bpw; g = 128: 2.125.
 */
public final class TQ2_0Format extends BlockCodeFormat {
    public static final int DEFAULT_GROUP = 32;

    public TQ2_0Format(int group) {
        super("tq2_0", group, DEFAULT_GROUP, CodeGrid.TERNARY, ScaleRule.LEAST_SQUARES, new ScaleLayout.Fp16PerBlock(group));
    }
}
