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
 * and the group sum goes into the row accumulator with one FMA by its block's scale. Decode runs
 * {@link #row}; prefill and batched decode decode a row's levels once ({@link #levels}) and run
 * {@link #twoFromLevels} over pairs of tokens. Both do exactly these operations per row and
 * token, so batched and single-token products give the same bits.
 *
 * <p>One subclass per code width, each with its decode written out in the loop body: C2 then
 * compiles each loop as one unit with the vectors in registers. A shared loop calling a per-width
 * decode method measured 5× slower: the decode was compiled on its own and not inlined, so every
 * vector it returned was boxed. For the same reason loop bodies stay small: C2 stops inlining
 * once a method's parse reaches its node limit (NodeCountInliningCutoff), and a two-row q4 decode
 * loop or a four-token loop went past it (measured 10× slower), so decode takes one row and
 * prefill two tokens per pass.
 */
abstract sealed class GroupKernel permits GroupKernel.Codes8, GroupKernel.Codes4, GroupKernel.Codes5, GroupKernel.CodesLow {
    static final java.lang.foreign.ValueLayout.OfInt I32_LE =
            java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
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
            FloatVector d = scale(s, g);
            int o = offset + (g << 5);
            for (int h = 0; h < 32; h += Lanes.COUNT) {
                x(dst, o + h).mul(d).intoArray(dst, o + h);
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
            FloatVector d = scale(s, g);
            if (Lanes.COUNT == 8) {
                FloatVector w0 = x(lv, o);
                FloatVector w1 = x(lv, o + 8);
                FloatVector w2 = x(lv, o + 16);
                FloatVector w3 = x(lv, o + 24);
                acc0 = tree(w0, w1, w2, w3, x, x0 + o).fma(d, acc0);
                acc1 = tree(w0, w1, w2, w3, x, x1 + o).fma(d, acc1);
            } else {
                FloatVector w0 = x(lv, o);
                FloatVector w1 = x(lv, o + 16);
                acc0 = chain(w0, w1, x, x0 + o).fma(d, acc0);
                acc1 = chain(w0, w1, x, x1 + o).fma(d, acc1);
            }
        }
        y[y0] = Lanes.sumInOrder(acc0);
        y[y1] = Lanes.sumInOrder(acc1);
    }

    /** {@link #twoFromLevels} for one token. */
    final float oneFromLevels(int row, float[] lv, float[] x, int x0) {
        int s = row * blocksPerRow;
        FloatVector acc = FloatVector.zero(Lanes.FLOATS);
        for (int g = 0; g < groups; g++) {
            int o = g << 5;
            FloatVector sum = Lanes.COUNT == 8
                    ? tree(x(lv, o), x(lv, o + 8), x(lv, o + 16), x(lv, o + 24), x, x0 + o)
                    : chain(x(lv, o), x(lv, o + 16), x, x0 + o);
            acc = sum.fma(scale(s, g), acc);
        }
        return Lanes.sumInOrder(acc);
    }

    static IntVector bytesToInts(MemorySegment data, long at) {
        return (IntVector) ByteVector.fromMemorySegment(Lanes.BYTES, data, at, ByteOrder.LITTLE_ENDIAN)
                .convertShape(VectorOperators.ZERO_EXTEND_B2I, Lanes.INTS, 0);
    }

    static FloatVector bytesToFloats(MemorySegment data, long at) {
        return (FloatVector) ByteVector.fromMemorySegment(Lanes.BYTES, data, at, ByteOrder.LITTLE_ENDIAN)
                .castShape(Lanes.FLOATS, 0);
    }

    /**
     * The fifth bits of the {@link Lanes#COUNT} values from value {@code start} of a 32-value group
     * (a multiple of the lane count), as 16 or 0 per int lane; {@code word} is the group's 32 bits.
     */
    static IntVector highBits(int word, int start) {
        return IntVector.broadcast(Lanes.INTS, word).lanewise(VectorOperators.LSHR, BIT_OF_LANE[start / Lanes.COUNT])
                .and(1).lanewise(VectorOperators.LSHL, 4);
    }

    static FloatVector floats(IntVector v) {
        return (FloatVector) v.convert(VectorOperators.I2F, 0);
    }

    static FloatVector x(float[] x, int at) {
        return FloatVector.fromArray(Lanes.FLOATS, x, at);
    }

    /** The 8-lane group tree with the levels decoded. */
    static FloatVector tree(FloatVector w0, FloatVector w1, FloatVector w2, FloatVector w3, float[] x, int xo) {
        FloatVector a = w0.mul(x(x, xo));
        FloatVector b = w1.mul(x(x, xo + 8));
        a = w2.fma(x(x, xo + 16), a);
        b = w3.fma(x(x, xo + 24), b);
        return a.add(b);
    }

    /** The 16-lane group chain with the levels decoded. */
    static FloatVector chain(FloatVector w0, FloatVector w1, float[] x, int xo) {
        return w1.fma(x(x, xo + 16), w0.mul(x(x, xo)));
    }

    FloatVector scale(int s, int g) {
        return FloatVector.broadcast(Lanes.FLOATS, scales[s + (g >>> groupShift)]);
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
                    sum = tree(bytesToFloats(data, p), bytesToFloats(data, p + 8), bytesToFloats(data, p + 16),
                            bytesToFloats(data, p + 24), x, xo);
                } else {
                    sum = chain(bytesToFloats(data, p), bytesToFloats(data, p + 16), x, xo);
                }
                acc = sum.fma(scale(s, g), acc);
            }
            return Lanes.sumInOrder(acc);
        }

        @Override
        void levels(int row, float[] dst, int offset) {
            long codes = row * rowBytes + codesOffset;
            for (int j = 0; j < groups << 5; j += Lanes.COUNT) {
                bytesToFloats(data, codes + j).intoArray(dst, offset + j);
            }
        }

        /** {@link GroupKernel#dequantize} in one pass: each level vector scaled as it is decoded (the same products). */
        @Override
        void dequantize(int row, float[] dst, int offset) {
            long codes = row * rowBytes + codesOffset;
            int s = row * blocksPerRow;
            for (int g = 0; g < groups; g++) {
                FloatVector d = scale(s, g);
                long p = codes + ((long) g << 5);
                int o = offset + (g << 5);
                for (int h = 0; h < 32; h += Lanes.COUNT) {
                    bytesToFloats(data, p + h).mul(d).intoArray(dst, o + h);
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
            IntVector low = IntVector.broadcast(Lanes.INTS, 15);
            IntVector off = IntVector.broadcast(Lanes.INTS, offset);
            FloatVector acc = FloatVector.zero(Lanes.FLOATS);
            for (int g = 0; g < groups; g++) {
                long p = codes + ((long) g << 4);
                int xo = xOffset + (g << 5);
                FloatVector sum;
                if (Lanes.COUNT == 8) {
                    IntVector v0 = bytesToInts(data, p);
                    IntVector v1 = bytesToInts(data, p + 8);
                    sum = tree(floats(v0.and(low).sub(off)), floats(v1.and(low).sub(off)),
                            floats(v0.lanewise(VectorOperators.LSHR, 4).sub(off)),
                            floats(v1.lanewise(VectorOperators.LSHR, 4).sub(off)), x, xo);
                } else {
                    IntVector v = bytesToInts(data, p);
                    sum = chain(floats(v.and(low).sub(off)), floats(v.lanewise(VectorOperators.LSHR, 4).sub(off)), x, xo);
                }
                acc = sum.fma(scale(s, g), acc);
            }
            return Lanes.sumInOrder(acc);
        }

        @Override
        void levels(int row, float[] dst, int at) {
            long codes = row * rowBytes + codesOffset;
            IntVector low = IntVector.broadcast(Lanes.INTS, 15);
            IntVector off = IntVector.broadcast(Lanes.INTS, offset);
            for (int g = 0; g < groups; g++) {
                long p = codes + ((long) g << 4);
                int o = at + (g << 5);
                for (int h = 0; h < 16; h += Lanes.COUNT) {
                    IntVector v = bytesToInts(data, p + h);
                    floats(v.and(low).sub(off)).intoArray(dst, o + h);
                    floats(v.lanewise(VectorOperators.LSHR, 4).sub(off)).intoArray(dst, o + 16 + h);
                }
            }
        }

        /** {@link GroupKernel#dequantize} in one pass: each level vector scaled as it is decoded (the same products). */
        @Override
        void dequantize(int row, float[] dst, int at) {
            long codes = row * rowBytes + codesOffset;
            int s = row * blocksPerRow;
            IntVector low = IntVector.broadcast(Lanes.INTS, 15);
            IntVector off = IntVector.broadcast(Lanes.INTS, offset);
            for (int g = 0; g < groups; g++) {
                FloatVector d = scale(s, g);
                long p = codes + ((long) g << 4);
                int o = at + (g << 5);
                for (int h = 0; h < 16; h += Lanes.COUNT) {
                    IntVector v = bytesToInts(data, p + h);
                    floats(v.and(low).sub(off)).mul(d).intoArray(dst, o + h);
                    floats(v.lanewise(VectorOperators.LSHR, 4).sub(off)).mul(d).intoArray(dst, o + 16 + h);
                }
            }
        }
    }

    /**
     * 5-bit codes (q5_0, q5_1): a group's low 4 bits are one 16-byte unit of nibbles, as
     * {@link Codes4} reads them, and its fifth bits a 32-bit word of the high-bit plane; level =
     * (nibble | fifth bit × 16) − offset.
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
            IntVector low = IntVector.broadcast(Lanes.INTS, 15);
            IntVector off = IntVector.broadcast(Lanes.INTS, offset);
            FloatVector acc = FloatVector.zero(Lanes.FLOATS);
            for (int g = 0; g < groups; g++) {
                long p = codes + ((long) g << 4);
                int h = data.get(I32_LE, high + ((long) g << 2));
                int xo = xOffset + (g << 5);
                FloatVector sum;
                if (Lanes.COUNT == 8) {
                    IntVector v0 = bytesToInts(data, p);
                    IntVector v1 = bytesToInts(data, p + 8);
                    sum = tree(floats(v0.and(low).or(highBits(h, 0)).sub(off)),
                            floats(v1.and(low).or(highBits(h, 8)).sub(off)),
                            floats(v0.lanewise(VectorOperators.LSHR, 4).or(highBits(h, 16)).sub(off)),
                            floats(v1.lanewise(VectorOperators.LSHR, 4).or(highBits(h, 24)).sub(off)), x, xo);
                } else {
                    IntVector v = bytesToInts(data, p);
                    sum = chain(floats(v.and(low).or(highBits(h, 0)).sub(off)),
                            floats(v.lanewise(VectorOperators.LSHR, 4).or(highBits(h, 16)).sub(off)), x, xo);
                }
                acc = sum.fma(scale(s, g), acc);
            }
            return Lanes.sumInOrder(acc);
        }

        @Override
        void levels(int row, float[] dst, int at) {
            long codes = row * rowBytes + codesOffset;
            long high = codes + highBits;
            IntVector low = IntVector.broadcast(Lanes.INTS, 15);
            IntVector off = IntVector.broadcast(Lanes.INTS, offset);
            for (int g = 0; g < groups; g++) {
                long p = codes + ((long) g << 4);
                int hw = data.get(I32_LE, high + ((long) g << 2));
                int o = at + (g << 5);
                for (int h = 0; h < 16; h += Lanes.COUNT) {
                    IntVector v = bytesToInts(data, p + h);
                    floats(v.and(low).or(highBits(hw, h)).sub(off)).intoArray(dst, o + h);
                    floats(v.lanewise(VectorOperators.LSHR, 4).or(highBits(hw, 16 + h)).sub(off)).intoArray(dst, o + 16 + h);
                }
            }
        }
    }

    /**
     * 2- and 1-bit codes: a 16-byte unit holds 128/bits values, so a group is two bit fields of the
     * unit's bytes (fields 2k and 2k + 1 for the unit's k-th group); level = step × code − offset.
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

        private long unit(long codes, int g) {
            return codes + ((long) (g >>> groupsPerUnitShift) << 4);
        }

        private int shift(int g) {
            return (g & ((1 << groupsPerUnitShift) - 1)) * 2 * bits;
        }

        /** Levels of one bit field: step × code − offset, the step (1 or 2) applied as a shift. */
        private FloatVector levels(IntVector v, int shift) {
            return floats(v.lanewise(VectorOperators.LSHR, shift).and(mask).lanewise(VectorOperators.LSHL, stepShift)
                    .sub(offset));
        }

        /**
         * The decode is written out here rather than called ({@link #levels(IntVector, int)}): as a
         * call it measured 14× slower (0.39 G weights/s against q4_0's 5.5 on 4864×896, one
         * thread), the loop's vectors being boxed; the scale by the step is a shift by 0 or 1.
         */
        @Override
        float row(int row, float[] x, int xOffset) {
            long codes = row * rowBytes + codesOffset;
            int s = row * blocksPerRow;
            IntVector off = IntVector.broadcast(Lanes.INTS, offset);
            int m = mask;
            int up = stepShift;
            FloatVector acc = FloatVector.zero(Lanes.FLOATS);
            for (int g = 0; g < groups; g++) {
                long p = unit(codes, g);
                int lo = shift(g);
                int hi = lo + bits;
                int xo = xOffset + (g << 5);
                FloatVector sum;
                if (Lanes.COUNT == 8) {
                    IntVector v0 = bytesToInts(data, p);
                    IntVector v1 = bytesToInts(data, p + 8);
                    sum = tree(floats(v0.lanewise(VectorOperators.LSHR, lo).and(m).lanewise(VectorOperators.LSHL, up).sub(off)),
                            floats(v1.lanewise(VectorOperators.LSHR, lo).and(m).lanewise(VectorOperators.LSHL, up).sub(off)),
                            floats(v0.lanewise(VectorOperators.LSHR, hi).and(m).lanewise(VectorOperators.LSHL, up).sub(off)),
                            floats(v1.lanewise(VectorOperators.LSHR, hi).and(m).lanewise(VectorOperators.LSHL, up).sub(off)),
                            x, xo);
                } else {
                    IntVector v = bytesToInts(data, p);
                    sum = chain(floats(v.lanewise(VectorOperators.LSHR, lo).and(m).lanewise(VectorOperators.LSHL, up).sub(off)),
                            floats(v.lanewise(VectorOperators.LSHR, hi).and(m).lanewise(VectorOperators.LSHL, up).sub(off)),
                            x, xo);
                }
                acc = sum.fma(scale(s, g), acc);
            }
            return Lanes.sumInOrder(acc);
        }

        @Override
        void levels(int row, float[] dst, int at) {
            long codes = row * rowBytes + codesOffset;
            for (int g = 0; g < groups; g++) {
                long p = unit(codes, g);
                int sh = shift(g);
                int o = at + (g << 5);
                for (int h = 0; h < 16; h += Lanes.COUNT) {
                    IntVector v = bytesToInts(data, p + h);
                    levels(v, sh).intoArray(dst, o + h);
                    levels(v, sh + bits).intoArray(dst, o + 16 + h);
                }
            }
        }
    }
}
