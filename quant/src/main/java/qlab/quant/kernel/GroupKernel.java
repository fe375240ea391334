package qlab.quant.kernel;

import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;

/**
 * The vector part of the f32-activation product of {@link BlockCodeWeights}: whole 32-value
 * groups (values 32g .. 32g + 31 of a row, all inside full code units), one group per loop step.
 *
 * <p>Per group: the levels of its 32 values are decoded into {@link Lanes#COUNT}-lane float
 * vectors and multiplied by the activations in a fixed tree — with 8 lanes two chains
 * a = w0·x0 + w2·x2 and b = w1·x1 + w3·x3, then a + b; with 16 lanes one chain w0·x0 + w1·x1 —
 * and the group sum goes into the row accumulator with one FMA by its block's scale; the
 * accumulator's lanes are summed in index order ({@link Lanes#sumInOrder}). Decode runs
 * {@link #row}; prefill and batched decode decode a row's levels once ({@link #levels}) and run
 * {@link #twoFromLevels} over pairs of tokens. Both do exactly these operations per row and
 * token, so batched and single-token products give the same bits.
 *
 * <p>No vector crosses a call to a method of ours: every loop is written with Vector API calls
 * only (the load, the decode, the tree, the lane sum), because the API's methods are always
 * inlined (@ForceInline) and ours only when C2's heuristics agree. When they do not, every
 * vector passed or returned is boxed: a decode helper compiled on its own measured 5× slower,
 * a level decode called from the 2-bit loop 14×, and in one JVM that ran other formats first
 * q4_0 decode fell to 0.39 tok/s against 31 (C2 compiled PackedWeights.dot with Codes4.row
 * inlined while row's profile was still empty, and refused the helpers inside it as "low call
 * site frequency" and "already compiled into a medium method"; that code then stayed).
 * KernelStructureTest checks the rule on the bytecode. Loop bodies also stay small: C2
 * stops inlining once a method's parse reaches its node limit (NodeCountInliningCutoff), and a
 * two-row q4 decode loop or a four-token loop went past it (measured 10× slower), so decode
 * takes one row and prefill two tokens per pass.
 */
abstract sealed class GroupKernel permits GroupKernel.Codes8, GroupKernel.Codes4, GroupKernel.Codes5, GroupKernel.CodesLow {
    static final java.lang.foreign.ValueLayout.OfInt I32_LE =
            java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    /** Per start value (0, 8, 16, 24 with 8 lanes; 0, 16 with 16): the bit index of each lane's value. */
    private static final IntVector[] BIT_OF_LANE = new IntVector[32 / Lanes.COUNT];

    static {
        for (int i = 0; i < BIT_OF_LANE.length; i++) {
            int[] bits = new int[Lanes.COUNT];
            for (int lane = 0; lane < bits.length; lane++) {
                bits[lane] = i * Lanes.COUNT + lane;
            }
            BIT_OF_LANE[i] = IntVector.fromArray(Lanes.INTS, bits, 0);
        }
    }

    final MemorySegment data;
    final long rowBytes;
    final long codesOffset;
    final float[] scales;
    final int blocksPerRow;
    final int groupShift;
    final int groups;
    final int cols;

    GroupKernel(MemorySegment data, long rowBytes, long codesOffset, float[] scales, int blocksPerRow,
                int block, int groups, int cols) {
        this.data = data;
        this.rowBytes = rowBytes;
        this.codesOffset = codesOffset;
        this.scales = scales;
        this.blocksPerRow = blocksPerRow;
        this.groupShift = Integer.numberOfTrailingZeros(block) - 5;
        this.groups = groups;
        this.cols = cols;
    }

    /** @param highBits 5-bit codes: where the plane of fifth bits starts, from the start of a row's codes */
    static GroupKernel of(CodeGrid grid, MemorySegment data, long rowBytes, long codesOffset, long highBits,
                          float[] scales, int blocksPerRow, int block, int groups, int cols) {
        return switch (grid.bits) {
            case 8 -> new Codes8(data, rowBytes, codesOffset, scales, blocksPerRow, block, groups, cols);
            case 4 -> new Codes4(grid, data, rowBytes, codesOffset, scales, blocksPerRow, block, groups, cols);
            case 5 -> new Codes5(grid, data, rowBytes, codesOffset, highBits, scales, blocksPerRow, block, groups, cols);
            default -> new CodesLow(grid, data, rowBytes, codesOffset, scales, blocksPerRow, block, groups, cols);
        };
    }

    /** Σ over the row's groups, lanes summed in order: the row's dot product without its tail. */
    abstract float row(int row, float[] x, int xOffset);

    /** The levels of the row's groups, as floats (exact small integers), into dst[offset .. offset + 32 × groups). */
    abstract void levels(int row, float[] dst, int offset);

    /**
     * The row's groups dequantized, level × its block's scale (the product {@link
     * BlockCodeWeights#dequantizeRow} computes, so the same bits), into dst[offset .. offset + 32 × groups).
     */
    void dequantize(int row, float[] dst, int offset) {
        levels(row, dst, offset);
        int s = row * blocksPerRow;
        for (int g = 0; g < groups; g++) {
            FloatVector d = FloatVector.broadcast(Lanes.FLOATS, scales[s + (g >>> groupShift)]);
            int o = offset + (g << 5);
            for (int h = 0; h < 32; h += Lanes.COUNT) {
                FloatVector.fromArray(Lanes.FLOATS, dst, o + h).mul(d).intoArray(dst, o + h);
            }
        }
    }

    /**
     * {@link #row} for two tokens (x at x0 and x1) from levels decoded by {@link #levels}: the same
     * tree and the same FMAs, with the level vectors loaded instead of decoded, so the same bits.
     * Prefill decodes a row once and runs this over every pair of tokens.
     */
    final void twoFromLevels(int row, float[] lv, float[] x, int x0, int x1, float[] y, int y0, int y1) {
        int s = row * blocksPerRow;
        FloatVector acc0 = FloatVector.zero(Lanes.FLOATS);
        FloatVector acc1 = acc0;
        for (int g = 0; g < groups; g++) {
            int o = g << 5;
            FloatVector d = FloatVector.broadcast(Lanes.FLOATS, scales[s + (g >>> groupShift)]);
            int a = x0 + o;
            int b = x1 + o;
            if (Lanes.COUNT == 8) {
                FloatVector w0 = FloatVector.fromArray(Lanes.FLOATS, lv, o);
                FloatVector w1 = FloatVector.fromArray(Lanes.FLOATS, lv, o + 8);
                FloatVector w2 = FloatVector.fromArray(Lanes.FLOATS, lv, o + 16);
                FloatVector w3 = FloatVector.fromArray(Lanes.FLOATS, lv, o + 24);
                acc0 = w2.fma(FloatVector.fromArray(Lanes.FLOATS, x, a + 16), w0.mul(FloatVector.fromArray(Lanes.FLOATS, x, a)))
                        .add(w3.fma(FloatVector.fromArray(Lanes.FLOATS, x, a + 24), w1.mul(FloatVector.fromArray(Lanes.FLOATS, x, a + 8))))
                        .fma(d, acc0);
                acc1 = w2.fma(FloatVector.fromArray(Lanes.FLOATS, x, b + 16), w0.mul(FloatVector.fromArray(Lanes.FLOATS, x, b)))
                        .add(w3.fma(FloatVector.fromArray(Lanes.FLOATS, x, b + 24), w1.mul(FloatVector.fromArray(Lanes.FLOATS, x, b + 8))))
                        .fma(d, acc1);
            } else {
                FloatVector w0 = FloatVector.fromArray(Lanes.FLOATS, lv, o);
                FloatVector w1 = FloatVector.fromArray(Lanes.FLOATS, lv, o + 16);
                acc0 = w1.fma(FloatVector.fromArray(Lanes.FLOATS, x, a + 16), w0.mul(FloatVector.fromArray(Lanes.FLOATS, x, a)))
                        .fma(d, acc0);
                acc1 = w1.fma(FloatVector.fromArray(Lanes.FLOATS, x, b + 16), w0.mul(FloatVector.fromArray(Lanes.FLOATS, x, b)))
                        .fma(d, acc1);
            }
        }
        float sum0 = 0;
        float sum1 = 0;
        for (int i = 0; i < Lanes.COUNT; i++) {
            sum0 += acc0.lane(i);
            sum1 += acc1.lane(i);
        }
        y[y0] = sum0;
        y[y1] = sum1;
    }

    /** {@link #twoFromLevels} for one token. */
    final float oneFromLevels(int row, float[] lv, float[] x, int x0) {
        int s = row * blocksPerRow;
        FloatVector acc = FloatVector.zero(Lanes.FLOATS);
        for (int g = 0; g < groups; g++) {
            int o = g << 5;
            int a = x0 + o;
            FloatVector sum;
            if (Lanes.COUNT == 8) {
                sum = FloatVector.fromArray(Lanes.FLOATS, lv, o + 16).fma(FloatVector.fromArray(Lanes.FLOATS, x, a + 16),
                                FloatVector.fromArray(Lanes.FLOATS, lv, o).mul(FloatVector.fromArray(Lanes.FLOATS, x, a)))
                        .add(FloatVector.fromArray(Lanes.FLOATS, lv, o + 24).fma(FloatVector.fromArray(Lanes.FLOATS, x, a + 24),
                                FloatVector.fromArray(Lanes.FLOATS, lv, o + 8).mul(FloatVector.fromArray(Lanes.FLOATS, x, a + 8))));
            } else {
                sum = FloatVector.fromArray(Lanes.FLOATS, lv, o + 16).fma(FloatVector.fromArray(Lanes.FLOATS, x, a + 16),
                        FloatVector.fromArray(Lanes.FLOATS, lv, o).mul(FloatVector.fromArray(Lanes.FLOATS, x, a)));
            }
            acc = sum.fma(FloatVector.broadcast(Lanes.FLOATS, scales[s + (g >>> groupShift)]), acc);
        }
        float sum = 0;
        for (int i = 0; i < Lanes.COUNT; i++) {
            sum += acc.lane(i);
        }
        return sum;
    }

    /**
     * The fifth bits of the {@link Lanes#COUNT} values from value {@code start} of a 32-value group
     * (a multiple of the lane count), as 16 or 0 per int lane; {@code word} is the group's 32 bits.
     * For {@link BlockCodeWeights}' int8 kernels; the loops here write it out.
     */
    static IntVector highBits(int word, int start) {
        return IntVector.broadcast(Lanes.INTS, word).lanewise(VectorOperators.LSHR, BIT_OF_LANE[start / Lanes.COUNT])
                .and(1).lanewise(VectorOperators.LSHL, 4);
    }

    /** 8-bit codes: a group is 32 consecutive signed bytes. */
    static final class Codes8 extends GroupKernel {
        Codes8(MemorySegment data, long rowBytes, long codesOffset, float[] scales, int blocksPerRow, int block,
               int groups, int cols) {
            super(data, rowBytes, codesOffset, scales, blocksPerRow, block, groups, cols);
        }

        @Override
        float row(int row, float[] x, int xOffset) {
            long codes = row * rowBytes + codesOffset;
            int s = row * blocksPerRow;
            FloatVector acc = FloatVector.zero(Lanes.FLOATS);
            for (int g = 0; g < groups; g++) {
                long p = codes + ((long) g << 5);
                int xo = xOffset + (g << 5);
                FloatVector sum;
                if (Lanes.COUNT == 8) {
                    FloatVector w0 = (FloatVector) ByteVector.fromMemorySegment(Lanes.BYTES, data, p, LE).castShape(Lanes.FLOATS, 0);
                    FloatVector w1 = (FloatVector) ByteVector.fromMemorySegment(Lanes.BYTES, data, p + 8, LE).castShape(Lanes.FLOATS, 0);
                    FloatVector w2 = (FloatVector) ByteVector.fromMemorySegment(Lanes.BYTES, data, p + 16, LE).castShape(Lanes.FLOATS, 0);
                    FloatVector w3 = (FloatVector) ByteVector.fromMemorySegment(Lanes.BYTES, data, p + 24, LE).castShape(Lanes.FLOATS, 0);
                    sum = w2.fma(FloatVector.fromArray(Lanes.FLOATS, x, xo + 16), w0.mul(FloatVector.fromArray(Lanes.FLOATS, x, xo)))
                            .add(w3.fma(FloatVector.fromArray(Lanes.FLOATS, x, xo + 24), w1.mul(FloatVector.fromArray(Lanes.FLOATS, x, xo + 8))));
                } else {
                    FloatVector w0 = (FloatVector) ByteVector.fromMemorySegment(Lanes.BYTES, data, p, LE).castShape(Lanes.FLOATS, 0);
                    FloatVector w1 = (FloatVector) ByteVector.fromMemorySegment(Lanes.BYTES, data, p + 16, LE).castShape(Lanes.FLOATS, 0);
                    sum = w1.fma(FloatVector.fromArray(Lanes.FLOATS, x, xo + 16), w0.mul(FloatVector.fromArray(Lanes.FLOATS, x, xo)));
                }
                acc = sum.fma(FloatVector.broadcast(Lanes.FLOATS, scales[s + (g >>> groupShift)]), acc);
            }
            float sum = 0;
            for (int i = 0; i < Lanes.COUNT; i++) {
                sum += acc.lane(i);
            }
            return sum;
        }

        @Override
        void levels(int row, float[] dst, int offset) {
            long codes = row * rowBytes + codesOffset;
            for (int j = 0; j < groups << 5; j += Lanes.COUNT) {
                ((FloatVector) ByteVector.fromMemorySegment(Lanes.BYTES, data, codes + j, LE).castShape(Lanes.FLOATS, 0))
                        .intoArray(dst, offset + j);
            }
        }

        /** {@link GroupKernel#dequantize} in one pass: each level vector scaled as it is decoded (the same products). */
        @Override
        void dequantize(int row, float[] dst, int offset) {
            long codes = row * rowBytes + codesOffset;
            int s = row * blocksPerRow;
            for (int g = 0; g < groups; g++) {
                FloatVector d = FloatVector.broadcast(Lanes.FLOATS, scales[s + (g >>> groupShift)]);
                long p = codes + ((long) g << 5);
                int o = offset + (g << 5);
                for (int h = 0; h < 32; h += Lanes.COUNT) {
                    ((FloatVector) ByteVector.fromMemorySegment(Lanes.BYTES, data, p + h, LE).castShape(Lanes.FLOATS, 0))
                            .mul(d).intoArray(dst, o + h);
                }
            }
        }
    }

    /**
     * 4-bit codes: a group is one 16-byte unit, values 0..15 in the low nibbles, 16..31 in the
     * high ones (bytes zero-extended, so the high nibble needs only a shift); level = code − offset.
     */
    static final class Codes4 extends GroupKernel {
        private final int offset;

        Codes4(CodeGrid grid, MemorySegment data, long rowBytes, long codesOffset, float[] scales, int blocksPerRow,
               int block, int groups, int cols) {
            super(data, rowBytes, codesOffset, scales, blocksPerRow, block, groups, cols);
            if (grid.step != 1) {
                throw new IllegalArgumentException("4-bit kernel needs a step-1 grid, got " + grid);
            }
            this.offset = grid.offset;
        }

        @Override
        float row(int row, float[] x, int xOffset) {
            long codes = row * rowBytes + codesOffset;
            int s = row * blocksPerRow;
            IntVector off = IntVector.broadcast(Lanes.INTS, offset);
            FloatVector acc = FloatVector.zero(Lanes.FLOATS);
            for (int g = 0; g < groups; g++) {
                long p = codes + ((long) g << 4);
                int xo = xOffset + (g << 5);
                FloatVector sum;
                if (Lanes.COUNT == 8) {
                    IntVector v0 = (IntVector) ByteVector.fromMemorySegment(Lanes.BYTES, data, p, LE)
                            .convertShape(VectorOperators.ZERO_EXTEND_B2I, Lanes.INTS, 0);
                    IntVector v1 = (IntVector) ByteVector.fromMemorySegment(Lanes.BYTES, data, p + 8, LE)
                            .convertShape(VectorOperators.ZERO_EXTEND_B2I, Lanes.INTS, 0);
                    FloatVector w0 = (FloatVector) v0.and(15).sub(off).convert(VectorOperators.I2F, 0);
                    FloatVector w1 = (FloatVector) v1.and(15).sub(off).convert(VectorOperators.I2F, 0);
                    FloatVector w2 = (FloatVector) v0.lanewise(VectorOperators.LSHR, 4).sub(off).convert(VectorOperators.I2F, 0);
                    FloatVector w3 = (FloatVector) v1.lanewise(VectorOperators.LSHR, 4).sub(off).convert(VectorOperators.I2F, 0);
                    sum = w2.fma(FloatVector.fromArray(Lanes.FLOATS, x, xo + 16), w0.mul(FloatVector.fromArray(Lanes.FLOATS, x, xo)))
                            .add(w3.fma(FloatVector.fromArray(Lanes.FLOATS, x, xo + 24), w1.mul(FloatVector.fromArray(Lanes.FLOATS, x, xo + 8))));
                } else {
                    IntVector v = (IntVector) ByteVector.fromMemorySegment(Lanes.BYTES, data, p, LE)
                            .convertShape(VectorOperators.ZERO_EXTEND_B2I, Lanes.INTS, 0);
                    FloatVector w0 = (FloatVector) v.and(15).sub(off).convert(VectorOperators.I2F, 0);
                    FloatVector w1 = (FloatVector) v.lanewise(VectorOperators.LSHR, 4).sub(off).convert(VectorOperators.I2F, 0);
                    sum = w1.fma(FloatVector.fromArray(Lanes.FLOATS, x, xo + 16), w0.mul(FloatVector.fromArray(Lanes.FLOATS, x, xo)));
                }
                acc = sum.fma(FloatVector.broadcast(Lanes.FLOATS, scales[s + (g >>> groupShift)]), acc);
            }
            float sum = 0;
            for (int i = 0; i < Lanes.COUNT; i++) {
                sum += acc.lane(i);
            }
            return sum;
        }

        @Override
        void levels(int row, float[] dst, int at) {
            long codes = row * rowBytes + codesOffset;
            IntVector off = IntVector.broadcast(Lanes.INTS, offset);
            for (int g = 0; g < groups; g++) {
                long p = codes + ((long) g << 4);
                int o = at + (g << 5);
                for (int h = 0; h < 16; h += Lanes.COUNT) {
                    IntVector v = (IntVector) ByteVector.fromMemorySegment(Lanes.BYTES, data, p + h, LE)
                            .convertShape(VectorOperators.ZERO_EXTEND_B2I, Lanes.INTS, 0);
                    ((FloatVector) v.and(15).sub(off).convert(VectorOperators.I2F, 0)).intoArray(dst, o + h);
                    ((FloatVector) v.lanewise(VectorOperators.LSHR, 4).sub(off).convert(VectorOperators.I2F, 0))
                            .intoArray(dst, o + 16 + h);
                }
            }
        }

        /** {@link GroupKernel#dequantize} in one pass: each level vector scaled as it is decoded (the same products). */
        @Override
        void dequantize(int row, float[] dst, int at) {
            long codes = row * rowBytes + codesOffset;
            int s = row * blocksPerRow;
            IntVector off = IntVector.broadcast(Lanes.INTS, offset);
            for (int g = 0; g < groups; g++) {
                FloatVector d = FloatVector.broadcast(Lanes.FLOATS, scales[s + (g >>> groupShift)]);
                long p = codes + ((long) g << 4);
                int o = at + (g << 5);
                for (int h = 0; h < 16; h += Lanes.COUNT) {
                    IntVector v = (IntVector) ByteVector.fromMemorySegment(Lanes.BYTES, data, p + h, LE)
                            .convertShape(VectorOperators.ZERO_EXTEND_B2I, Lanes.INTS, 0);
                    ((FloatVector) v.and(15).sub(off).convert(VectorOperators.I2F, 0)).mul(d).intoArray(dst, o + h);
                    ((FloatVector) v.lanewise(VectorOperators.LSHR, 4).sub(off).convert(VectorOperators.I2F, 0))
                            .mul(d).intoArray(dst, o + 16 + h);
                }
            }
        }
    }

    /**
     * 5-bit codes (q5_0, q5_1): a group's low 4 bits are one 16-byte unit of nibbles, as
     * {@link Codes4} reads them, and its fifth bits a 32-bit word of the high-bit plane; level =
     * (nibble | fifth bit × 16) − offset. Value i's fifth bit is bit i of the word, moved to 16 or
     * 0 per lane by a shift per lane ({@link #BIT_OF_LANE}).
     */
    static final class Codes5 extends GroupKernel {
        private final int offset;
        private final long highBits;

        Codes5(CodeGrid grid, MemorySegment data, long rowBytes, long codesOffset, long highBits, float[] scales,
               int blocksPerRow, int block, int groups, int cols) {
            super(data, rowBytes, codesOffset, scales, blocksPerRow, block, groups, cols);
            if (grid.bits != 5 || grid.step != 1) {
                throw new IllegalArgumentException("5-bit kernel needs a 5-bit step-1 grid, got " + grid);
            }
            this.offset = grid.offset;
            this.highBits = highBits;
        }

        @Override
        float row(int row, float[] x, int xOffset) {
            long codes = row * rowBytes + codesOffset;
            long high = codes + highBits;
            int s = row * blocksPerRow;
            IntVector off = IntVector.broadcast(Lanes.INTS, offset);
            FloatVector acc = FloatVector.zero(Lanes.FLOATS);
            for (int g = 0; g < groups; g++) {
                long p = codes + ((long) g << 4);
                IntVector h = IntVector.broadcast(Lanes.INTS, data.get(I32_LE, high + ((long) g << 2)));
                int xo = xOffset + (g << 5);
                FloatVector sum;
                if (Lanes.COUNT == 8) {
                    IntVector v0 = (IntVector) ByteVector.fromMemorySegment(Lanes.BYTES, data, p, LE)
                            .convertShape(VectorOperators.ZERO_EXTEND_B2I, Lanes.INTS, 0);
                    IntVector v1 = (IntVector) ByteVector.fromMemorySegment(Lanes.BYTES, data, p + 8, LE)
                            .convertShape(VectorOperators.ZERO_EXTEND_B2I, Lanes.INTS, 0);
                    FloatVector w0 = (FloatVector) v0.and(15)
                            .or(h.lanewise(VectorOperators.LSHR, BIT_OF_LANE[0]).and(1).lanewise(VectorOperators.LSHL, 4))
                            .sub(off).convert(VectorOperators.I2F, 0);
                    FloatVector w1 = (FloatVector) v1.and(15)
                            .or(h.lanewise(VectorOperators.LSHR, BIT_OF_LANE[1]).and(1).lanewise(VectorOperators.LSHL, 4))
                            .sub(off).convert(VectorOperators.I2F, 0);
                    FloatVector w2 = (FloatVector) v0.lanewise(VectorOperators.LSHR, 4)
                            .or(h.lanewise(VectorOperators.LSHR, BIT_OF_LANE[2]).and(1).lanewise(VectorOperators.LSHL, 4))
                            .sub(off).convert(VectorOperators.I2F, 0);
                    FloatVector w3 = (FloatVector) v1.lanewise(VectorOperators.LSHR, 4)
                            .or(h.lanewise(VectorOperators.LSHR, BIT_OF_LANE[3]).and(1).lanewise(VectorOperators.LSHL, 4))
                            .sub(off).convert(VectorOperators.I2F, 0);
                    sum = w2.fma(FloatVector.fromArray(Lanes.FLOATS, x, xo + 16), w0.mul(FloatVector.fromArray(Lanes.FLOATS, x, xo)))
                            .add(w3.fma(FloatVector.fromArray(Lanes.FLOATS, x, xo + 24), w1.mul(FloatVector.fromArray(Lanes.FLOATS, x, xo + 8))));
                } else {
                    IntVector v = (IntVector) ByteVector.fromMemorySegment(Lanes.BYTES, data, p, LE)
                            .convertShape(VectorOperators.ZERO_EXTEND_B2I, Lanes.INTS, 0);
                    FloatVector w0 = (FloatVector) v.and(15)
                            .or(h.lanewise(VectorOperators.LSHR, BIT_OF_LANE[0]).and(1).lanewise(VectorOperators.LSHL, 4))
                            .sub(off).convert(VectorOperators.I2F, 0);
                    FloatVector w1 = (FloatVector) v.lanewise(VectorOperators.LSHR, 4)
                            .or(h.lanewise(VectorOperators.LSHR, BIT_OF_LANE[1]).and(1).lanewise(VectorOperators.LSHL, 4))
                            .sub(off).convert(VectorOperators.I2F, 0);
                    sum = w1.fma(FloatVector.fromArray(Lanes.FLOATS, x, xo + 16), w0.mul(FloatVector.fromArray(Lanes.FLOATS, x, xo)));
                }
                acc = sum.fma(FloatVector.broadcast(Lanes.FLOATS, scales[s + (g >>> groupShift)]), acc);
            }
            float sum = 0;
            for (int i = 0; i < Lanes.COUNT; i++) {
                sum += acc.lane(i);
            }
            return sum;
        }

        @Override
        void levels(int row, float[] dst, int at) {
            long codes = row * rowBytes + codesOffset;
            long high = codes + highBits;
            IntVector off = IntVector.broadcast(Lanes.INTS, offset);
            for (int g = 0; g < groups; g++) {
                long p = codes + ((long) g << 4);
                IntVector hw = IntVector.broadcast(Lanes.INTS, data.get(I32_LE, high + ((long) g << 2)));
                int o = at + (g << 5);
                for (int h = 0; h < 16; h += Lanes.COUNT) {
                    IntVector v = (IntVector) ByteVector.fromMemorySegment(Lanes.BYTES, data, p + h, LE)
                            .convertShape(VectorOperators.ZERO_EXTEND_B2I, Lanes.INTS, 0);
                    ((FloatVector) v.and(15)
                            .or(hw.lanewise(VectorOperators.LSHR, BIT_OF_LANE[h / Lanes.COUNT]).and(1).lanewise(VectorOperators.LSHL, 4))
                            .sub(off).convert(VectorOperators.I2F, 0)).intoArray(dst, o + h);
                    ((FloatVector) v.lanewise(VectorOperators.LSHR, 4)
                            .or(hw.lanewise(VectorOperators.LSHR, BIT_OF_LANE[(16 + h) / Lanes.COUNT]).and(1).lanewise(VectorOperators.LSHL, 4))
                            .sub(off).convert(VectorOperators.I2F, 0)).intoArray(dst, o + 16 + h);
                }
            }
        }
    }

    /**
     * 2- and 1-bit codes: a 16-byte unit holds 128/bits values, so a group is two bit fields of the
     * unit's bytes (fields 2k and 2k + 1 for the unit's k-th group); level = step × code − offset,
     * the step (1 or 2) applied as a shift by 0 or 1.
     */
    static final class CodesLow extends GroupKernel {
        private final int bits;
        private final int mask;
        private final int offset;
        private final int groupsPerUnitShift;
        private final int stepShift;

        CodesLow(CodeGrid grid, MemorySegment data, long rowBytes, long codesOffset, float[] scales, int blocksPerRow,
                 int block, int groups, int cols) {
            super(data, rowBytes, codesOffset, scales, blocksPerRow, block, groups, cols);
            if (grid.bits != 2 && grid.bits != 1) {
                throw new IllegalArgumentException("low-bit kernel needs 1- or 2-bit codes, got " + grid);
            }
            this.bits = grid.bits;
            this.mask = (1 << grid.bits) - 1;
            this.offset = grid.offset;
            this.groupsPerUnitShift = Integer.numberOfTrailingZeros(CodePacking.unitValues(grid.bits) / 32);
            if (grid.step != 1 && grid.step != 2) {
                throw new IllegalArgumentException("low-bit kernel needs a grid step of 1 or 2, got " + grid);
            }
            this.stepShift = grid.step == 2 ? 1 : 0;
        }

        @Override
        float row(int row, float[] x, int xOffset) {
            long codes = row * rowBytes + codesOffset;
            int s = row * blocksPerRow;
            IntVector off = IntVector.broadcast(Lanes.INTS, offset);
            int m = mask;
            int up = stepShift;
            int unitGroups = (1 << groupsPerUnitShift) - 1;
            FloatVector acc = FloatVector.zero(Lanes.FLOATS);
            for (int g = 0; g < groups; g++) {
                long p = codes + ((long) (g >>> groupsPerUnitShift) << 4);
                int lo = (g & unitGroups) * 2 * bits;
                int hi = lo + bits;
                int xo = xOffset + (g << 5);
                FloatVector sum;
                if (Lanes.COUNT == 8) {
                    IntVector v0 = (IntVector) ByteVector.fromMemorySegment(Lanes.BYTES, data, p, LE)
                            .convertShape(VectorOperators.ZERO_EXTEND_B2I, Lanes.INTS, 0);
                    IntVector v1 = (IntVector) ByteVector.fromMemorySegment(Lanes.BYTES, data, p + 8, LE)
                            .convertShape(VectorOperators.ZERO_EXTEND_B2I, Lanes.INTS, 0);
                    FloatVector w0 = (FloatVector) v0.lanewise(VectorOperators.LSHR, lo).and(m).lanewise(VectorOperators.LSHL, up)
                            .sub(off).convert(VectorOperators.I2F, 0);
                    FloatVector w1 = (FloatVector) v1.lanewise(VectorOperators.LSHR, lo).and(m).lanewise(VectorOperators.LSHL, up)
                            .sub(off).convert(VectorOperators.I2F, 0);
                    FloatVector w2 = (FloatVector) v0.lanewise(VectorOperators.LSHR, hi).and(m).lanewise(VectorOperators.LSHL, up)
                            .sub(off).convert(VectorOperators.I2F, 0);
                    FloatVector w3 = (FloatVector) v1.lanewise(VectorOperators.LSHR, hi).and(m).lanewise(VectorOperators.LSHL, up)
                            .sub(off).convert(VectorOperators.I2F, 0);
                    sum = w2.fma(FloatVector.fromArray(Lanes.FLOATS, x, xo + 16), w0.mul(FloatVector.fromArray(Lanes.FLOATS, x, xo)))
                            .add(w3.fma(FloatVector.fromArray(Lanes.FLOATS, x, xo + 24), w1.mul(FloatVector.fromArray(Lanes.FLOATS, x, xo + 8))));
                } else {
                    IntVector v = (IntVector) ByteVector.fromMemorySegment(Lanes.BYTES, data, p, LE)
                            .convertShape(VectorOperators.ZERO_EXTEND_B2I, Lanes.INTS, 0);
                    FloatVector w0 = (FloatVector) v.lanewise(VectorOperators.LSHR, lo).and(m).lanewise(VectorOperators.LSHL, up)
                            .sub(off).convert(VectorOperators.I2F, 0);
                    FloatVector w1 = (FloatVector) v.lanewise(VectorOperators.LSHR, hi).and(m).lanewise(VectorOperators.LSHL, up)
                            .sub(off).convert(VectorOperators.I2F, 0);
                    sum = w1.fma(FloatVector.fromArray(Lanes.FLOATS, x, xo + 16), w0.mul(FloatVector.fromArray(Lanes.FLOATS, x, xo)));
                }
                acc = sum.fma(FloatVector.broadcast(Lanes.FLOATS, scales[s + (g >>> groupShift)]), acc);
            }
            float sum = 0;
            for (int i = 0; i < Lanes.COUNT; i++) {
                sum += acc.lane(i);
            }
            return sum;
        }

        @Override
        void levels(int row, float[] dst, int at) {
            long codes = row * rowBytes + codesOffset;
            IntVector off = IntVector.broadcast(Lanes.INTS, offset);
            int m = mask;
            int up = stepShift;
            int unitGroups = (1 << groupsPerUnitShift) - 1;
            for (int g = 0; g < groups; g++) {
                long p = codes + ((long) (g >>> groupsPerUnitShift) << 4);
                int lo = (g & unitGroups) * 2 * bits;
                int hi = lo + bits;
                int o = at + (g << 5);
                for (int h = 0; h < 16; h += Lanes.COUNT) {
                    IntVector v = (IntVector) ByteVector.fromMemorySegment(Lanes.BYTES, data, p + h, LE)
                            .convertShape(VectorOperators.ZERO_EXTEND_B2I, Lanes.INTS, 0);
                    ((FloatVector) v.lanewise(VectorOperators.LSHR, lo).and(m).lanewise(VectorOperators.LSHL, up)
                            .sub(off).convert(VectorOperators.I2F, 0)).intoArray(dst, o + h);
                    ((FloatVector) v.lanewise(VectorOperators.LSHR, hi).and(m).lanewise(VectorOperators.LSHL, up)
                            .sub(off).convert(VectorOperators.I2F, 0)).intoArray(dst, o + 16 + h);
                }
            }
        }
    }
}
