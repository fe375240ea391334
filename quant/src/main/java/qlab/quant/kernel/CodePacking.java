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

    /**
     * 5-bit codes (q5_0, q5_1) are split in two planes: the low 4 bits of every value as 4-bit
     * codes (the rule above), then one bit per value, value j at byte j / 8, bit j % 8 — per
     * 32-value group the 4 bytes of ggml's {@code qh}, nibbles and high bits each in ggml's order.
     */
    static final int HIGH_BIT = 5;

    public static int paddedCols(int cols) {
        return (cols + 31) & ~31;
    }

    public static long codeBytes(int cols, int bits) {
        return (long) paddedCols(cols) * bits / 8;
    }

    /** Where the high-bit plane of 5-bit codes starts, from the start of the row's codes. */
    public static long highBitsOffset(int cols) {
        return paddedCols(cols) / 2;
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
        if (bits == HIGH_BIT) {
            int high = codes.get(ValueLayout.JAVA_BYTE, rowCodes + highBitsOffset(cols) + (j >>> 3)) >>> (j & 7) & 1;
            return read(codes, rowCodes, j, cols, 4) | high << 4;
        }
        int b = codes.get(ValueLayout.JAVA_BYTE, rowCodes + byteOf(j, cols, bits)) & 0xFF;
        return (b >>> shiftOf(j, cols, bits)) & ((1 << bits) - 1);
    }

    /** ORs the code into place: the code bytes must be zeroed first. */
    public static void write(MemorySegment codes, long rowCodes, int j, int cols, int bits, int code) {
        if (bits == HIGH_BIT) {
            write(codes, rowCodes, j, cols, 4, code & 15);
            long h = rowCodes + highBitsOffset(cols) + (j >>> 3);
            codes.set(ValueLayout.JAVA_BYTE, h, (byte) (codes.get(ValueLayout.JAVA_BYTE, h) | (code >>> 4 & 1) << (j & 7)));
            return;
        }
        long at = rowCodes + byteOf(j, cols, bits);
        int b = codes.get(ValueLayout.JAVA_BYTE, at) & 0xFF;
        int shift = shiftOf(j, cols, bits);
        codes.set(ValueLayout.JAVA_BYTE, at, (byte) (b | ((code & ((1 << bits) - 1)) << shift)));
    }
}
