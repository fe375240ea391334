package qlab.quant.format;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * How a row's scales are stored in front of its codes. The quantizer picks one ideal scale per
 * group ({@link #groupValues}); the layout rounds them to what it can store and reports, for each
 * kernel block ({@link #kernelBlock}), the effective f32 scale that dequantization multiplies by.
 * {@link #decode} reproduces exactly those effective scales from the stored bytes.
 */
interface ScaleLayout {
    ValueLayout.OfFloat F32_LE = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    ValueLayout.OfShort I16_LE = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** Values per effective scale as the kernels see it (32, 64 or 128). */
    int kernelBlock();

    /** Values per ideal scale the quantizer chooses (the whole row for per-row layouts). */
    int groupValues(int cols);

    /** Bytes before the codes. */
    long headerBytes(int cols);

    /**
     * Stores the scales of one row; ideal holds ceil(cols / groupValues) scales. Fills
     * effective[0 .. ceil(cols / kernelBlock)).
     */
    void encode(float[] ideal, int cols, MemorySegment dst, long rowOffset, float[] effective);

    /** Effective scales of a stored row into effective[offset .. offset + ceil(cols / kernelBlock)). */
    void decode(MemorySegment src, long rowOffset, int cols, float[] effective, int offset);

    static int blocks(int cols, int block) {
        return (cols + block - 1) / block;
    }

    // ---------------------------------------------------------------- implementations

    /**
     * An fp16 scale per block (q8_0, q4_0, q4_1, q5_0, q5_1, q2_0, tq2_0, b1_0). {@link #encode}
     * (qlab's own rules) saturates at ±65504; the formats with ggml's names store ggml's fp16
     * scale, which overflows to ±inf as ggml's does.
     */
    record Fp16PerBlock(int block) implements ScaleLayout {
        @Override
        public int kernelBlock() {
            return block;
        }

        @Override
        public int groupValues(int cols) {
            return block;
        }

        @Override
        public long headerBytes(int cols) {
            return 2L * blocks(cols, block);
        }

        @Override
        public void encode(float[] ideal, int cols, MemorySegment dst, long rowOffset, float[] effective) {
            for (int b = 0; b < blocks(cols, block); b++) {
                float clamped = Math.max(-65504f, Math.min(65504f, ideal[b]));
                short half = Float.floatToFloat16(clamped);
                dst.set(I16_LE, rowOffset + 2L * b, half);
                effective[b] = Float.float16ToFloat(half);
            }
        }

        @Override
        public void decode(MemorySegment src, long rowOffset, int cols, float[] effective, int offset) {
            for (int b = 0; b < blocks(cols, block); b++) {
                effective[offset + b] = Float.float16ToFloat(src.get(I16_LE, rowOffset + 2L * b));
            }
        }
    }

    /** An f32 scale per block (int4 reference). */
    record F32PerBlock(int block) implements ScaleLayout {
        @Override
        public int kernelBlock() {
            return block;
        }

        @Override
        public int groupValues(int cols) {
            return block;
        }

        @Override
        public long headerBytes(int cols) {
            return 4L * blocks(cols, block);
        }

        @Override
        public void encode(float[] ideal, int cols, MemorySegment dst, long rowOffset, float[] effective) {
            for (int b = 0; b < blocks(cols, block); b++) {
                dst.set(F32_LE, rowOffset + 4L * b, ideal[b]);
                effective[b] = ideal[b];
            }
        }

        @Override
        public void decode(MemorySegment src, long rowOffset, int cols, float[] effective, int offset) {
            for (int b = 0; b < blocks(cols, block); b++) {
                effective[offset + b] = src.get(F32_LE, rowOffset + 4L * b);
            }
        }
    }

    /**
     * One f32 scale for the whole row (int8 per output channel). The kernels still see it per
     * 32-value block (repeated), which gives the int8-activation path its activation block.
     */
    record F32PerRow() implements ScaleLayout {
        static final int KERNEL_BLOCK = 32;

        @Override
        public int kernelBlock() {
            return KERNEL_BLOCK;
        }

        @Override
        public int groupValues(int cols) {
            return cols;
        }

        @Override
        public long headerBytes(int cols) {
            return 4;
        }

        @Override
        public void encode(float[] ideal, int cols, MemorySegment dst, long rowOffset, float[] effective) {
            dst.set(F32_LE, rowOffset, ideal[0]);
            java.util.Arrays.fill(effective, 0, blocks(cols, KERNEL_BLOCK), ideal[0]);
        }

        @Override
        public void decode(MemorySegment src, long rowOffset, int cols, float[] effective, int offset) {
            java.util.Arrays.fill(effective, offset, offset + blocks(cols, KERNEL_BLOCK), src.get(F32_LE, rowOffset));
        }
    }

    /**
     * q4_8: an f32 row base, then one u8 sub-scale per block: effective = base × sub (f32 product).
     * base = max ideal / 255, so the largest block uses the full u8 range. Ideal scales must be ≥ 0.
     */
    record RowBaseU8(int block) implements ScaleLayout {
        @Override
        public int kernelBlock() {
            return block;
        }

        @Override
        public int groupValues(int cols) {
            return block;
        }

        @Override
        public long headerBytes(int cols) {
            return 4L + blocks(cols, block);
        }

        @Override
        public void encode(float[] ideal, int cols, MemorySegment dst, long rowOffset, float[] effective) {
            int n = blocks(cols, block);
            float max = 0;
            for (int b = 0; b < n; b++) {
                max = Math.max(max, ideal[b]);
            }
            float base = max / 255f;
            dst.set(F32_LE, rowOffset, base);
            for (int b = 0; b < n; b++) {
                int sub = base == 0 ? 0 : Math.min(255, qlab.quant.Rounding.halfAwayFromZero(ideal[b] / base));
                dst.set(ValueLayout.JAVA_BYTE, rowOffset + 4 + b, (byte) sub);
                effective[b] = base * sub;
            }
        }

        @Override
        public void decode(MemorySegment src, long rowOffset, int cols, float[] effective, int offset) {
            float base = src.get(F32_LE, rowOffset);
            for (int b = 0; b < blocks(cols, block); b++) {
                effective[offset + b] = base * (src.get(ValueLayout.JAVA_BYTE, rowOffset + 4 + b) & 0xFF);
            }
        }
    }

    /**
     * q2_8, tq2_8, b1_8: an f32 row base; per 128-value superblock a u8 scale S; per 32-value group
     * a u8 sub-scale s: effective = (base × S) × s, both products in f32. Layout of the header:
     * base | S for every superblock | s for every group. The last superblock may hold fewer than
     * four groups (rows are padded to 32 values only). Ideal scales must be ≥ 0.
     */
    record TwoLevelU8() implements ScaleLayout {
        static final int GROUP = 32;
        static final int SUPERBLOCK = 128;
        static final int GROUPS_PER_SUPERBLOCK = SUPERBLOCK / GROUP;

        @Override
        public int kernelBlock() {
            return GROUP;
        }

        @Override
        public int groupValues(int cols) {
            return GROUP;
        }

        @Override
        public long headerBytes(int cols) {
            return 4L + blocks(cols, SUPERBLOCK) + blocks(cols, GROUP);
        }

        @Override
        public void encode(float[] ideal, int cols, MemorySegment dst, long rowOffset, float[] effective) {
            int groups = blocks(cols, GROUP);
            int superblocks = blocks(cols, SUPERBLOCK);
            float max = 0;
            for (int g = 0; g < groups; g++) {
                max = Math.max(max, ideal[g]);
            }
            // base × 255 × 255 reaches the largest group scale.
            float base = max / (255f * 255f);
            dst.set(F32_LE, rowOffset, base);
            long subAt = rowOffset + 4 + superblocks;
            for (int sb = 0; sb < superblocks; sb++) {
                int g0 = sb * GROUPS_PER_SUPERBLOCK;
                int g1 = Math.min(groups, g0 + GROUPS_PER_SUPERBLOCK);
                float sbMax = 0;
                for (int g = g0; g < g1; g++) {
                    sbMax = Math.max(sbMax, ideal[g]);
                }
                // Round S up so that the superblock's largest group still fits in a u8 sub-scale.
                int s = base == 0 ? 0 : (int) Math.min(255, Math.ceil(sbMax / (base * 255f)));
                dst.set(ValueLayout.JAVA_BYTE, rowOffset + 4 + sb, (byte) s);
                float sbScale = base * s;
                for (int g = g0; g < g1; g++) {
                    int sub = sbScale == 0 ? 0 : Math.min(255, qlab.quant.Rounding.halfAwayFromZero(ideal[g] / sbScale));
                    dst.set(ValueLayout.JAVA_BYTE, subAt + g, (byte) sub);
                    effective[g] = sbScale * sub;
                }
            }
        }

        @Override
        public void decode(MemorySegment src, long rowOffset, int cols, float[] effective, int offset) {
            int groups = blocks(cols, GROUP);
            int superblocks = blocks(cols, SUPERBLOCK);
            float base = src.get(F32_LE, rowOffset);
            long subAt = rowOffset + 4 + superblocks;
            for (int g = 0; g < groups; g++) {
                float sbScale = base * (src.get(ValueLayout.JAVA_BYTE, rowOffset + 4 + g / GROUPS_PER_SUPERBLOCK) & 0xFF);
                effective[offset + g] = sbScale * (src.get(ValueLayout.JAVA_BYTE, subAt + g) & 0xFF);
            }
        }
    }
}
