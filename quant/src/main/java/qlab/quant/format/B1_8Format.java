package qlab.quant.format;

import qlab.quant.kernel.CodeGrid;

/**
 * b1_8: binary levels −1, 1 in 1-bit codes, scale the mean absolute value.
 * Per 32-value group one ideal scale, stored two-level: an f32 row base, a u8 scale per
 * 128-value superblock and a u8 sub-scale per group (effective = base × S × s).
 * Row: f32 base | u8 S × ceil(cols/128) | u8 s × ceil(cols/32) | codes × cols rounded up to 32.
 * On 896-wide rows: (4 + 7 + 28 + 112) B = 151 B = 1.348 bpw.
 */
public final class B1_8Format extends BlockCodeFormat {
    public B1_8Format() {
        super("b1_8", ScaleLayout.TwoLevelU8.SUPERBLOCK, ScaleLayout.TwoLevelU8.SUPERBLOCK, CodeGrid.BINARY,
                ScaleRule.MEAN_ABS, new ScaleLayout.TwoLevelU8());
    }
}
