package qlab.quant.format;

import qlab.quant.kernel.CodeGrid;

/**
 * q4_8 (128-value superblocks) and q4_8g64 (64-value superblocks): an f32 base scale per row,
 * one u8 sub-scale per superblock (effective scale = base × sub), codes −8..7 as nibbles.
 * The u8 sub-scale is unsigned, so the block scale is max(maxPositive / 7, maxNegative / 8).
 * Row: f32 base | u8 sub × ceil(cols/S) | nibbles × cols rounded up to 32.
 * On 896-wide rows: q4_8 (4 + 7·1 + 448) B = 459 B = 4.098 bpw; q4_8g64 (4 + 14 + 448) B = 4.161 bpw.
 */
public final class Q4_8Format extends BlockCodeFormat {
    public Q4_8Format(int superblock) {
        super(superblock == 128 ? "q4_8" : "q4_8g" + superblock, superblock, superblock, CodeGrid.Q4,
                ScaleRule.POSITIVE_MAX, new ScaleLayout.RowBaseU8(superblock));
    }
}
