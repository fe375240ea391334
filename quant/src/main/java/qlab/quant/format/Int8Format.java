package qlab.quant.format;

import qlab.quant.kernel.CodeGrid;

/**
 * int8, a plain reference: symmetric per output channel, one f32 scale max|x| / 127 per row and
 * int8 codes in [−127, 127]. Row: f32 scale | int8 codes × cols rounded up to 32.
 * On 896-wide rows (4 + 896) B = 8.036 bpw. The kernels see the row scale repeated per 32 values.
 */
public final class Int8Format extends BlockCodeFormat {
    public Int8Format() {
        super("int8", 0, 0, CodeGrid.INT8, ScaleRule.MAX_ABS, new ScaleLayout.F32PerRow());
    }
}
