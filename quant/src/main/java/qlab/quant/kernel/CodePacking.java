package qlab.quant.kernel;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Where each code of a row sits. A row's codes cover the row padded to a multiple of 32 values.
 * They are stored in 16-byte units of 128/bits values: in a unit, byte i holds values
 * i, 16 + i, 32 + i, … in its bit fields from the lowest up (for 4 bits: ggml's q4_0 order).
 * So one 16-byte load and one shift give 16 consecutive values, one per float lane.
 * A last partial unit of n values (only for 2- and 1-bit codes) uses the same rule with
 * n·bits/8 bytes in place of 16, so no padding beyond the 32-value boundary is stored.
 */
public final class CodePacking {
    private CodePacking() {
    }

    public static int paddedCols(int cols) {
        return (cols + 31) & ~31;
    }

    public static long codeBytes(int cols, int bits) {
        return (long) paddedCols(cols) * bits / 8;
    }

    /** Values in one full 16-byte unit. */
    public static int unitValues(int bits) {
        return 128 / bits;
    }

    /** Byte offset of value j from the start of the row's codes. */
    public static int byteOf(int j, int cols, int bits) {
        int unit = unitValues(bits);
        int unitStart = j - j % unit;
        int stride = Math.min(unit, paddedCols(cols) - unitStart) * bits / 8;
        return unitStart / unit * 16 + (j - unitStart) % stride;
    }

    /** Bit position of value j's code inside its byte. */
    public static int shiftOf(int j, int cols, int bits) {
        int unit = unitValues(bits);
        int unitStart = j - j % unit;
        int stride = Math.min(unit, paddedCols(cols) - unitStart) * bits / 8;
        return (j - unitStart) / stride * bits;
    }

    public static int read(MemorySegment codes, long rowCodes, int j, int cols, int bits) {
        int b = codes.get(ValueLayout.JAVA_BYTE, rowCodes + byteOf(j, cols, bits)) & 0xFF;
        return (b >>> shiftOf(j, cols, bits)) & ((1 << bits) - 1);
    }

    /** ORs the code into place: the code bytes must be zeroed first. */
    public static void write(MemorySegment codes, long rowCodes, int j, int cols, int bits, int code) {
        long at = rowCodes + byteOf(j, cols, bits);
        int b = codes.get(ValueLayout.JAVA_BYTE, at) & 0xFF;
        int shift = shiftOf(j, cols, bits);
        codes.set(ValueLayout.JAVA_BYTE, at, (byte) (b | ((code & ((1 << bits) - 1)) << shift)));
    }
}
