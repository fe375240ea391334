package qlab.quant.format;

import qlab.quant.kernel.CodeGrid;

/**
 * b1_0: binary levels −1, 1 in 1-bit codes, scale the mean absolute value; an fp16 scale per group of g values (32 or 128).
 * Row: fp16 d × ceil(cols/g) | codes × cols rounded up to 32.
 * At g = 32: (2 + 4) B / 32 weights = 1.5 bpw; g = 128: (2 + 16) B / 128 = 1.125.
 */
public final class B1_0Format extends BlockCodeFormat {
    public static final int DEFAULT_GROUP = 32;

    public B1_0Format(int group) {
        super("b1_0", group, DEFAULT_GROUP, CodeGrid.BINARY, ScaleRule.MEAN_ABS, new ScaleLayout.Fp16PerBlock(group));
    }
}
