package qlab.quant.format;

import qlab.quant.kernel.CodeGrid;

/**
 * tq2_8: ternary levels −1, 0, 1 in 2-bit codes, scale by least squares from 1.224·RMS.
 * Per 32-value group one ideal scale, stored two-level: an f32 row base, a u8 scale per
 * 128-value superblock and a u8 sub-scale per group (effective = base × S × s).
 * Row: f32 base | u8 S × ceil(cols/128) | u8 s × ceil(cols/32) | codes × cols rounded up to 32.
 * On 896-wide rows: (4 + 7 + 28 + 224) B = 263 B = 2.348 bpw.
 */
public final class TQ2_8Format extends BlockCodeFormat {
    public TQ2_8Format() {
        super("tq2_8", ScaleLayout.TwoLevelU8.SUPERBLOCK, ScaleLayout.TwoLevelU8.SUPERBLOCK, CodeGrid.TERNARY,
                ScaleRule.LEAST_SQUARES, new ScaleLayout.TwoLevelU8());
    }
}
