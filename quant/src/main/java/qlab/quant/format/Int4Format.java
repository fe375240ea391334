package qlab.quant.format;

import qlab.quant.kernel.CodeGrid;

/**
 * int4, a plain group-wise reference: per group of g values (32, 64 or 128; default 128) an f32
 * scale max|x| / 7 and symmetric codes −7..7 as nibbles code + 8.
 * Row: f32 d × ceil(cols/g) | nibbles × cols rounded up to 32. At g = 128: (4 + 64) B / 128 = 4.25 bpw.
 */
public final class Int4Format extends BlockCodeFormat {
    public static final int DEFAULT_GROUP = 128;

    public Int4Format(int group) {
        super("int4", group, DEFAULT_GROUP, CodeGrid.INT4, ScaleRule.MAX_ABS, new ScaleLayout.F32PerBlock(group));
    }
}
