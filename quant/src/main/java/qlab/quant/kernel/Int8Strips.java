package qlab.quant.kernel;

import java.nio.ByteOrder;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorSpecies;
import qlab.quant.Int8Activations;

/**
 * The int8-activation product of a block-code matrix with its rows in the vector lanes: the
 * levels repacked once into strips of {@link #ROWS} rows (16 with AVX2, 32 with AVX-512), column
 * by column, so one short vector holds one column of a strip and one multiply-add does a whole
 * strip.
 *
 * <p>Why rows in lanes: with the weights of one row in the lanes (the f32 kernels) every 32-value
 * block ends in a sum across lanes and a scale multiply, ~21 vector instructions per 32 weights for
 * q4. Here a strip's column is multiplied by one activation code broadcast over the lanes, and
 * the products are summed in 16-bit lanes down the columns with no cross-lane work: per pair of
 * 4-bit columns one load of codes, a mask, a shift, two broadcasts, two multiplies and two adds.
 * The Vector API has no int8 dot-product instruction ({@code vpmaddubsw}/{@code vpdpbusd}); 16-bit
 * lanes are what it offers instead.
 *
 * <p>Levels of at most 4 bits (every grid but {@link CodeGrid#INT8}) are stored as unsigned
 * nibbles level + 8, two columns per byte; the 8 is taken off once per 32 columns as
 * 8 × Σ activation codes. 16-bit sums of 32 such products are exact: the true sum, at most
 * 8 × 127 × 32 = 32512 in magnitude, is what the wrapping lanes hold once the correction is off.
 * 8-bit levels are stored as bytes; two products (≤ 2 × 127²) fit a 16-bit lane, so every column
 * pair is widened into 32-bit sums. Byte levels all within [−32, 32] (q2_k's, q3_k's) sum eight
 * columns in 16 bits before they are widened ({@link #stripSmallBytes}); q6_k's levels are 6-bit
 * codes, eight to three 16-bit words ({@link #stripSixBits}). Per block the integer sum is exact,
 * so each row's result is sum += isum × (weight scale × activation scale) over the blocks in
 * order — bit for bit
 * {@link qlab.quant.PackedWeights#dotInt8Scalar}. The last, partial block (width not a multiple
 * of the block) is done by scalar code on stored levels, in the same order.
 *
 * <p>The 32-column loop is written out in each kernel: as a helper returning the chunk's sum it
 * was fast only when C2 happened to inline it; in a run where prefill took another path it did
 * not, the returned vectors were boxed and q4_0 decoded at 9 tok/s instead of ~40. It keeps two
 * 16-bit sums, the even and the odd columns, added once per chunk: the same wrapping sum, so the
 * same bits, with the add chain halved. The scales are read the same way, written out where
 * each kernel uses them: through a helper returning their float vector, C2 compiled the 5-bit
 * kernel past its inlining budget ({@code NodeCountInliningCutoff}), left the helper a call and
 * boxed its result, and q5_0 decoded at 14 tok/s where q4_0 made 56 (qwen3-0.6b shapes, 2
 * threads). No vector crosses a call outside the Vector API in these kernels;
 * {@code KernelStructureTest} checks the bytecode for it. Against one sum, three alternating pairs each: {@code
 * bench} q4_0, one thread, decode 22.2/20.6/22.5 vs 21.0/20.2/20.8 tok/s (at two threads the
 * pairs went both ways: the host's noise is larger than the difference); MatVecBenchmark q4_0
 * 4864×896 hot, one thread, 15.4/19.6/14.6 vs 13.1/16.4/14.6 G multiply-adds/s.
 *
 * <p>Measured and not kept: leaving the low nibble unmasked (the whole byte lo + 16·hi times the
 * even column's code a, the high nibble times b − 16·a for the odd column's code b: the same
 * wrapping sum with one instruction fewer per column pair) ran 8–13% faster in a one-matrix loop,
 * but the whole model at one thread decoded q4_0 at 26.0/27.7/30.9 tok/s against 31.0/30.4/31.3
 * for this kernel (alternating builds, {@code bench --reps 5}).
 *
 * <p>Activation codes are broadcast from the int8 codes, one per column. The kernel used to read
 * them from a copy with every code repeated once per lane, which saved the broadcast but cost
 * {@code ROWS × 2} bytes per column: with 32-row strips 57 KiB for 896 columns, more than the
 * 32 KiB L1, so every strip re-read it from L2 while its codes came from DRAM. On AVX-512 (Zen 4,
 * 32-row strips), whole model, 2 threads, {@code bench --reps 3}, alternating builds: q8_0 decode
 * 27.6/25.3 → 44.9/44.5 tok/s, q4_0 45.1/43.0 → 70.6/68.2. A first form broadcasting from a
 * short copy of the codes measured the same in alternating processes (q8_0 26.8/26.9/28.5 →
 * 44.5/44.5/42.4, q4_0 42.3/43.8/43.5 → 71.0/67.4/74.8) and, one 4864×896 product, one thread
 * ({@code MatVecBenchmark}, G multiply-adds/s): q8_0 23.7 → 23.1 hot, 8.0 → 16.6 cold; q4_0 29.8
 * → 37.2 hot, 12.7 → 18.1 cold. (On an AVX2 machine, 16-row strips, the
 * copy's 28 KiB fitted L1 and the two ran as fast in a one-matrix loop.)
 *
 * <p>Where the strips live, and how the activation codes reach the lanes (AVX-512 machine, AMD
 * Zen 4, 2 vCPUs; measured against the previous form of this class in alternating processes):
 * <ul>
 *   <li>In Java arrays, not an off-heap segment. Every segment load checks that the segment's
 *       session is still open: three loads and three branches that C2 left inside the 16-column
 *       loop, which it then did not unroll; and its speculation on those checks failed in some
 *       processes (uncommon traps, recompilations), so the compiled loop differed from run to
 *       run: five runs of one build decoded at 61.6 to 78.3 tok/s, the slowest one of the three
 *       that recompiled. Array loads are range-checked once per loop. The launcher asks for
 *       transparent huge pages for the heap ({@code -XX:+UseTransparentHugePages}), which keeps
 *       the 2 MiB pages the off-heap strips had.</li>
 *   <li>Codes broadcast from {@link Activations#pairs}, each code twice in a 32-bit word: a
 *       32-bit broadcast from memory is a plain load, where a 16-bit one from a byte needed a
 *       sign extension, a move to a vector register and a shuffle.</li>
 *   <li>Scales stored after each block's codes, in 2 bytes when they are all fp16 values (q8_0,
 *       q4_0, and every format with an fp16 scale per block), so a strip reads as many bytes as
 *       the format does (18 per row and 32-value block for q4_0, not 20).</li>
 * </ul>
 * With all three: one 4864×896 q4_0 product ({@code MatVecBenchmark}, two alternating pairs),
 * 1 thread hot 5542/7058 → 8047/8332 products/s, 2 threads streamed from DRAM 8222/6747 →
 * 10055/11235; the whole model, q4_0 int8 decode, 2 threads, four alternating pairs: 48.2/54.7/
 * 58.0/60.1 → 74.4/72.9/73.4/82.5 tok/s. The fp16 scales alone, before the other two, changed
 * nothing measurable (decode 61.5/65.0/68.3/77.4 → 64.3/60.0/70.2/77.3): the loop, not the
 * bytes, was the limit then.
 *
 * <p>Strip height follows the vector width. On an AVX-512 machine (AMD Zen 4, 2 vCPUs), whole
 * model, 2 threads, {@code bench --reps 3}, processes alternating 16-row strips in 256-bit
 * vectors ({@code -Dqlab.vector.lanes=8}) and 32-row strips in 512-bit ones: q8_0 decode
 * 23.4/22.7/22.2 → 27.0/27.6/28.8 tok/s, q4_0 42.4/41.4/39.7 → 45.8/45.4/45.3 (half the
 * instructions per multiply-add; both measured with the repeated activation copy, see above).
 *
 * <p>Where the nibble kernel's time goes (a loop over 304 strips × 896 columns, one thread, G
 * multiply-adds/s; "cold" cycles 24 such matrices on 2 MiB pages): 22–23 hot, 15–18 cold.
 * Multiplies replaced by adds: the same 22.7 hot, so the multiplier is not the limit. Activation
 * loads taken out of the loop: +5–10% hot, +5–13% cold. The byte loads and their widening alone,
 * with no arithmetic: 34 hot, 19–21 cold, i.e. 10 GB/s of nibbles from DRAM on one core, well
 * under the 17.6 GB/s a plain read reaches. Also measured and not kept: two strips per pass
 * sharing each activation load, 15.4 against 20.8 hot and 9.3–12.2 against 13.3–17.6 cold (C2
 * spills the sums and reloads the mask; four strips: 9.5 hot, 6.1–8.9 cold); 16-bit words of four
 * nibbles with the unmasked trick (one load, three shifts, four multiplies and four adds per four
 * columns, a quarter fewer instructions): as fast or slower hot, and with four sums +5–11% hot but
 * +1–2% cold.
 */
public final class Int8Strips {
    /**
     * Rows per strip: the lanes of one short vector twice {@link Lanes#COUNT} wide (16 rows in a
     * 256-bit vector with AVX2, 32 in a 512-bit one with AVX-512), so a strip's 32-bit sums and
     * its floats are two vectors of {@link Lanes#COUNT} lanes.
     */
    public static final int ROWS = 2 * Lanes.COUNT;
    /** Cache budget of one pass over a group of strips and a token (see {@link #stripsPerPass}); half an L2 of this machine. */
    static final long PASS_BYTES = 256 << 10;

    /** Half a strip: the lanes of its int and float vectors. */
    private static final int HALF = ROWS / 2;
    private static final VectorSpecies<Short> SHORTS = VectorSpecies.of(short.class, VectorShape.forBitSize(ROWS * 16));
    private static final VectorSpecies<Byte> BYTES = VectorSpecies.of(byte.class, VectorShape.forBitSize(ROWS * 8));
    private static final VectorSpecies<Integer> INTS = Lanes.INTS;
    private static final VectorSpecies<Float> FLOATS = Lanes.FLOATS;
    /** The bytes of half a strip's fp16 scales, and of its f32 ones. */
    private static final VectorSpecies<Byte> HALF_SCALE_BYTES = VectorSpecies.of(byte.class, VectorShape.forBitSize(HALF * 16));
    private static final VectorSpecies<Byte> FLOAT_SCALE_BYTES = VectorSpecies.of(byte.class, VectorShape.forBitSize(HALF * 32));
    /**
     * An fp16 scale widened to 32 bits with its sign extended, shifted left by 13, keeps under
     * this mask its sign in bit 31 and its exponent and mantissa in bits 13..27: the float
     * 2^−112 times the scale (subnormal halves too), so a multiply by 2^112 gives it exactly.
     */
    private static final int SIGN_EXPONENT_MANTISSA = 0x8FFF_FFFF;
    /** The bytes of half a strip's scale multipliers ({@link Factors}): one signed byte per row. */
    private static final VectorSpecies<Byte> MULTIPLIER_BYTES = VectorSpecies.of(byte.class, VectorShape.forBitSize(HALF * 8));
    /** The bytes of a short vector of {@link #ROWS} lanes: one 16-bit word of 5-bit codes per row. */
    private static final VectorSpecies<Byte> WORD_BYTES = VectorSpecies.of(byte.class, VectorShape.forBitSize(ROWS * 16));
    private static final boolean NATIVE_LITTLE = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;
    /**
     * 16-bit words per row and 32-value block of 5-bit codes: words 0..4 hold columns 0..14, three
     * codes each (bits 0-4, 5-9, 10-14), words 5..9 columns 16..30, word 10 columns 15 and 31.
     */
    static final int FIVE_BIT_WORDS = 11;
    /**
     * 16-bit words per row and 32-value block of 6-bit codes, three per eight columns 0..7: word 0
     * holds columns 0 and 1 (bits 0-5, 6-11) and the low four bits of column 6 (12-15), word 1
     * columns 2 and 3 and column 7's low bits, word 2 columns 4 and 5 and the high two bits of
     * columns 6 (12-13) and 7 (14-15).
     */
    static final int SIX_BIT_WORDS = 12;
    /** Ints per token and 32-value block in {@link Activations#blocks32}. */
    private static final int BLOCK_INFO = 4;
    /** Strips are kept in arrays of at most this many bytes. */
    static final long MAX_ARRAY_BYTES = 1L << 30;

    /** Writes the levels of a whole row, as floats (exact small integers), into dst[0 .. cols). */
    @FunctionalInterface
    public interface Levels {
        void row(int row, float[] dst);
    }

    private final int strips;
    private final int cols;
    private final int block;
    private final int blocksPerRow;
    private final boolean nibbles;
    /** Whether the levels are 5-bit codes, three to a 16-bit word ({@link #stripFiveBits}). */
    private final boolean fiveBits;
    /** Whether the levels are 6-bit codes, eight in three 16-bit words ({@link #stripSixBits}). */
    private final boolean sixBits;
    /**
     * Whether byte levels are all in [−32, 32], so a 16-bit lane sums eight of their products
     * exactly ({@link #stripSmallBytes}); found while packing.
     */
    private final boolean smallBytes;
    /** Values per weight scale: the block, or 16 inside 32-value blocks (the k-quants' sub-blocks). */
    private final int scaleBlock;
    /** Weight scales per row and block ({@code block / scaleBlock}). */
    private final int subs;
    /** Scales per row in the {@code scales} (and {@code mins}) arrays the strips are built from. */
    private final int scalesPerRow;
    /** Bytes between the scales of one sub-block of a block and the next's: one per row. */
    private final int subScaleBytes;
    /** Scale sub-blocks in the partial last block. */
    private final int tailSubs;
    /** Columns [0, vectorCols) are whole blocks, done by the vector loop. */
    private final int vectorCols;
    /**
     * Whether the scales (and minima) are stored as signed byte multipliers of one f32 factor per
     * row and group of {@link #factorBlocks} blocks ({@link Factors}), the group's factors at its head.
     */
    private final boolean factored;
    /** Blocks per factor group (a power of two; 1 without factors). */
    private final int factorBlocks;
    private final int factorShift;
    /** Bytes of a group's head: the {@link #ROWS} scale factors, then the minima's; 0 without factors. */
    private final int factorBytes;
    /** Whether every whole block's scale is a finite fp16 value, stored in 2 bytes instead of 4. */
    private final boolean halfScales;
    /** Bytes of one block's codes in a strip. */
    private final int blockCodeBytes;
    /** Bytes of one block in a strip: its codes, then its {@link #ROWS} scales. */
    private final int blockStride;
    /** Offset of the second half's scales (rows HALF .. ROWS) after the first half's in a block. */
    private final int oddScales;
    private final long stripBytes;
    /**
     * Per strip, per whole block: the codes (row r in lane {@link #lane}(r)), then the scales of its rows (in row order,
     * native byte order); {@link #stripsPerArray} strips per array.
     */
    private final byte[][] codes;
    private final int stripsPerArray;
    /** Levels of columns [vectorCols, cols), [strip × ROWS + lane][col − vectorCols]. */
    private final byte[] tail;
    /** Scales of the partial last block, [strip][ROWS][tailSubs] (empty without one). */
    private final float[] tailScales;
    /**
     * Nibble levels are stored as level − levelBias + 8 (levelBias 8 for the unsigned 0..15 levels
     * of q4_1, else 0), so that the stored value less 8 is in [−8, 7] and the 16-bit sums stay
     * exact; levelBias × Σ activation codes is added back to each block's 32-bit sum.
     */
    private final int levelBias;
    /** Whether each block also stores its rows' minima (q4_1, q5_1), after their scales. */
    private final boolean hasMins;
    /** Offset of a block's minima after its codes. */
    private final int minsAt;
    /** Minima of the partial last block, [strip][ROWS][tailSubs] (empty without one or without minima). */
    private final float[] tailMins;

    /**
     * Repacks the first {@code strips × ROWS} rows.
     *
     * @param bits   the code width (8: byte levels; 1, 2 or 4: levels in [−8, 7], stored as nibbles)
     * @param scales effective f32 scale of every block, [rows, ceil(cols / block)] (row-major, all rows)
     */
    public Int8Strips(int strips, int cols, int block, int bits, Levels levels, float[] scales) {
        this(strips, cols, block, block, (cols + block - 1) / block, bits, 0, levels, scales, null, null, MAX_ARRAY_BYTES);
    }

    /**
     * Repacks the first {@code strips × ROWS} rows of an affine or unsigned-level format.
     *
     * @param levelBias 8 for nibble levels in 0..15, else 0 (see {@link #levelBias})
     * @param mins      the f32 minimum of every block, laid out as {@code scales}; null for none
     */
    public Int8Strips(int strips, int cols, int block, int bits, int levelBias, Levels levels, float[] scales,
                      float[] mins) {
        this(strips, cols, block, block, (cols + block - 1) / block, bits, levelBias, levels, scales, mins, null, MAX_ARRAY_BYTES);
    }

    /**
     * Repacks the first {@code strips × ROWS} rows of a format with a weight scale (and minimum)
     * per {@code scaleBlock} values inside each activation block (16 inside 32 for the k-quants'
     * sub-blocks of 16; nibble and 5-bit levels need {@code scaleBlock == block}).
     *
     * @param scalesPerRow scales per row in {@code scales} and {@code mins} (at least ceil(cols / scaleBlock))
     * @param mins the f32 term added per sub-block (value = scale × level + min), laid out as {@code scales}; or null
     */
    public Int8Strips(int strips, int cols, int block, int scaleBlock, int scalesPerRow, int bits, int levelBias,
                      Levels levels, float[] scales, float[] mins) {
        this(strips, cols, block, scaleBlock, scalesPerRow, bits, levelBias, levels, scales, mins, null, MAX_ARRAY_BYTES);
    }

    /**
     * As above, with the sub-block scales (and minima) given as small integers times a factor per
     * group of sub-blocks ({@link Factors}); where they are not, the strips keep the scales as floats.
     */
    public Int8Strips(int strips, int cols, int block, int scaleBlock, int scalesPerRow, int bits, int levelBias,
                      Levels levels, float[] scales, float[] mins, Factors factors) {
        this(strips, cols, block, scaleBlock, scalesPerRow, bits, levelBias, levels, scales, mins, factors, MAX_ARRAY_BYTES);
    }

    /**
     * The factors of a format whose sub-block scales are small integers times one float per group
     * of sub-blocks (the k-quants: scale = d × sc, min = dmin × m, d and dmin per 256 values): per
     * row and group, the factor of the scales and, for a format with minima, of the minima (as
     * passed: the negated dmin where the minima are negated). The strips find each multiplier (a
     * signed byte) and keep it only if factor × multiplier is bitwise the scale in f32, so the
     * product is unchanged; one that is not makes them keep every scale as a float.
     *
     * @param subBlocksPerFactor scale sub-blocks per group (a power of two: 8 for q4_k's 32-value
     *                           sub-blocks of 256, 16 for q6_k's 16-value ones)
     * @param scaleFactors       [rows, ceil(scalesPerRow / subBlocksPerFactor)]
     * @param minFactors         laid out as {@code scaleFactors}; null without minima
     */
    public record Factors(int subBlocksPerFactor, float[] scaleFactors, float[] minFactors) {
    }

    /** As above, with the strips in arrays of at most {@code maxArrayBytes} (whole strips; tests use small ones). */
    Int8Strips(int strips, int cols, int block, int bits, Levels levels, float[] scales, long maxArrayBytes) {
        this(strips, cols, block, block, (cols + block - 1) / block, bits, 0, levels, scales, null, null, maxArrayBytes);
    }

    Int8Strips(int strips, int cols, int block, int scaleBlock, int scalesPerRow, int bits, int levelBias,
               Levels levels, float[] scales, float[] mins, Factors factors, long maxArrayBytes) {
        if (block < 32 || Integer.bitCount(block) != 1) {
            throw new IllegalArgumentException("block must be a power of two >= 32, got " + block);
        }
        if (scaleBlock < 16 || Integer.bitCount(scaleBlock) != 1 || scaleBlock > block) {
            throw new IllegalArgumentException("scale block must be a power of two in [16, " + block + "], got " + scaleBlock);
        }
        if (bits == 6 && levelBias != 0) {
            throw new IllegalArgumentException("6-bit levels take no level bias, got " + levelBias);
        }
        if (bits < 6 && scaleBlock != block || (bits == 5 || bits == 6) && block != 32) {
            throw new IllegalArgumentException(bits + "-bit levels need blocks of 32 (6 bits), one scale per block of 32"
                    + " (5 bits) or one scale per block (4 bits)");
        }
        this.strips = strips;
        this.cols = cols;
        this.block = block;
        this.blocksPerRow = (cols + block - 1) / block;
        this.nibbles = bits < 5;
        this.fiveBits = bits == 5;
        this.sixBits = bits == 6;
        this.scaleBlock = scaleBlock;
        this.subs = block / scaleBlock;
        this.scalesPerRow = scalesPerRow;
        this.vectorCols = cols / block * block;
        this.levelBias = levelBias;
        this.hasMins = mins != null;
        int rows = strips * ROWS;
        int wholeScales = vectorCols / scaleBlock;
        int wholeBlocks = vectorCols / block;
        byte[] scaleMultipliers = null;
        byte[] minMultipliers = null;
        // Factors apply to 32-value blocks (the k-quants'), one group holding whole blocks.
        if (factors != null && block == 32) {
            int per = factors.subBlocksPerFactor();
            if (per < 1 || Integer.bitCount(per) != 1 || per * scaleBlock < block) {
                throw new IllegalArgumentException("factor groups of " + per + " sub-blocks of " + scaleBlock
                        + " do not hold whole blocks of " + block);
            }
            if (hasMins != (factors.minFactors() != null)) {
                throw new IllegalArgumentException("factors of the minima must be given exactly when minima are");
            }
            scaleMultipliers = multipliers(rows, scalesPerRow, wholeScales, scales, factors.scaleFactors(), per);
            minMultipliers = hasMins && scaleMultipliers != null
                    ? multipliers(rows, scalesPerRow, wholeScales, mins, factors.minFactors(), per) : null;
        }
        this.factored = scaleMultipliers != null && (!hasMins || minMultipliers != null);
        this.factorBlocks = factored ? factors.subBlocksPerFactor() * scaleBlock / block : 1;
        this.factorShift = Integer.numberOfTrailingZeros(factorBlocks);
        this.factorBytes = factored ? ROWS * 4 * (hasMins ? 2 : 1) : 0;
        int groups = (wholeBlocks + factorBlocks - 1) / factorBlocks;
        int factorsPerRow = factored ? (scalesPerRow + factors.subBlocksPerFactor() - 1) / factors.subBlocksPerFactor() : 0;
        this.halfScales = !factored && halfScales(rows, scalesPerRow, wholeScales, scales)
                && (mins == null || halfScales(rows, scalesPerRow, wholeScales, mins));
        int scaleBytes = factored ? 1 : halfScales ? 2 : 4;
        this.blockCodeBytes = ROWS * (nibbles ? block / 2 : fiveBits ? 2 * FIVE_BIT_WORDS : sixBits ? 2 * SIX_BIT_WORDS : block);
        this.subScaleBytes = ROWS * scaleBytes;
        this.minsAt = blockCodeBytes + subs * subScaleBytes;
        this.blockStride = blockCodeBytes + subs * subScaleBytes * (hasMins ? 2 : 1);
        this.oddScales = HALF * scaleBytes;
        this.stripBytes = (long) blockStride * wholeBlocks + (long) factorBytes * groups;
        if (stripBytes > Integer.MAX_VALUE - 64) {
            throw new IllegalArgumentException("a strip of " + cols + " columns (" + stripBytes + " bytes) does not fit an array");
        }
        this.stripsPerArray = (int) Math.max(1, Math.min(strips, maxArrayBytes / Math.max(1, stripBytes)));
        this.codes = new byte[(strips + stripsPerArray - 1) / stripsPerArray][];
        for (int i = 0; i < codes.length; i++) {
            codes[i] = new byte[(int) (Math.min(stripsPerArray, strips - (long) i * stripsPerArray) * stripBytes)];
        }
        this.tail = new byte[strips * ROWS * (cols - vectorCols)];
        this.tailSubs = (cols - vectorCols + scaleBlock - 1) / scaleBlock;
        this.tailScales = new float[strips * ROWS * tailSubs];
        this.tailMins = new float[hasMins ? strips * ROWS * tailSubs : 0];
        byte[] sm = factored ? scaleMultipliers : null;
        byte[] mm = factored ? minMultipliers : null;
        // Strips are independent: repacked in parallel, each row's levels decoded in one call.
        boolean[] small = new boolean[strips];
        java.util.stream.IntStream.range(0, strips).parallel()
                .forEach(s -> small[s] = pack(s, levels, scales, mins, sm, mm, factors, factorsPerRow));
        boolean allSmall = !nibbles && !fiveBits && !sixBits;
        for (boolean b : small) {
            allSmall &= b;
        }
        this.smallBytes = allSmall;
    }

    /**
     * Each whole sub-block's multiplier: the signed byte m with factor × m bitwise the value in
     * f32 (zero factors: 0, −1 or 1, for the sign of a zero); null if some value has none.
     */
    private static byte[] multipliers(int rows, int perRow, int whole, float[] values, float[] factors, int per) {
        int factorsPerRow = (perRow + per - 1) / per;
        byte[] m = new byte[rows * perRow];
        for (int r = 0; r < rows; r++) {
            for (int k = 0; k < whole; k++) {
                float f = factors[r * factorsPerRow + k / per];
                float v = values[r * perRow + k];
                int want = Float.floatToRawIntBits(v);
                int first = f != 0 && Float.isFinite(f) && Float.isFinite(v) ? Math.round(v / f) : 0;
                boolean found = false;
                for (int c : new int[] {first, -1, 1}) {
                    if (c >= -128 && c <= 127 && Float.floatToRawIntBits(f * c) == want) {
                        m[r * perRow + k] = (byte) c;
                        found = true;
                        break;
                    }
                }
                if (!found) {
                    return null;
                }
            }
        }
        return m;
    }

    /** Where block b of a strip starts, from the strip's start: after the blocks before it and their groups' factors. */
    private int blockAt(int b) {
        return b * blockStride + ((b >>> factorShift) + 1) * factorBytes;
    }

    /**
     * Whether the scales of the whole blocks are all finite fp16 values (q8_0, q4_0 and the other
     * fp16-scaled formats), which the strips then keep in 2 bytes: a strip of q4_0 reads 18 bytes
     * per row and block, as the format does, instead of 20 with f32 scales.
     */
    private static boolean halfScales(int rows, int scalesPerRow, int wholeScales, float[] scales) {
        for (int r = 0; r < rows; r++) {
            for (int b = 0; b < wholeScales; b++) {
                float v = scales[r * scalesPerRow + b];
                short h = Float.floatToFloat16(v);
                if (!Float.isFinite(v) || Float.floatToRawIntBits(Float.float16ToFloat(h)) != Float.floatToRawIntBits(v)) {
                    return false;
                }
            }
        }
        return true;
    }

    /** Packs strip s; returns whether its whole blocks' levels are all in [−32, 32]. */
    private boolean pack(int s, Levels levels, float[] rowScales, float[] rowMins, byte[] scaleMultipliers,
                         byte[] minMultipliers, Factors factors, int factorsPerRow) {
        int tailCols = cols - vectorCols;
        boolean small = true;
        byte[] strip = new byte[(int) stripBytes];
        float[] rowLevels = new float[cols];
        for (int r = 0; r < ROWS; r++) {
            int row = s * ROWS + r;
            int lane = lane(r);
            levels.row(row, rowLevels);
            for (int j = 0; j < vectorCols; j++) {
                int level = (int) rowLevels[j];
                int inBlock = j & (block - 1);
                int blockAt = blockAt(j / block);
                if (nibbles) {
                    int stored = level - levelBias;
                    if (stored < -8 || stored > 7) {
                        throw new IllegalArgumentException("level " + level + " does not fit a nibble");
                    }
                    int at = blockAt + (inBlock >>> 1) * ROWS + lane;
                    strip[at] = (byte) ((j & 1) == 0 ? stored + 8 : (strip[at] & 0x0F) | (stored + 8) << 4);
                } else if (fiveBits) {
                    int stored = level - levelBias + 16;
                    if (stored < 0 || stored > 31) {
                        throw new IllegalArgumentException("level " + level + " does not fit a 5-bit code");
                    }
                    int half = inBlock >>> 4;
                    int m = inBlock & 15;
                    int word = m < 15 ? 5 * half + m / 3 : 10;
                    int shift = m < 15 ? 5 * (m % 3) : 5 * half;
                    orWord(strip, blockAt + word * 2 * ROWS + 2 * lane, stored << shift);
                } else if (sixBits) {
                    if (level < -32 || level > 31) {
                        throw new IllegalArgumentException("level " + level + " does not fit a 6-bit code");
                    }
                    int stored = level + 32;
                    int at = blockAt + 3 * (inBlock >>> 3) * 2 * ROWS + 2 * lane;
                    int m = inBlock & 7;
                    if (m < 6) {
                        orWord(strip, at + (m >>> 1) * 2 * ROWS, stored << 6 * (m & 1));
                    } else {
                        orWord(strip, at + (m - 6) * 2 * ROWS, (stored & 15) << 12);
                        orWord(strip, at + 4 * ROWS, (stored >>> 4) << 12 + 2 * (m - 6));
                    }
                } else {
                    small &= level >= -32 && level <= 32;
                    strip[blockAt + (inBlock >>> 1) * 2 * ROWS + (j & 1) * ROWS + lane] = (byte) level;
                }
            }
            int scaleBytes = factored ? 1 : halfScales ? 2 : 4;
            for (int b = 0; b < vectorCols / block; b++) {
                for (int k = 0; k < subs; k++) {
                    int at = blockAt(b) + k * subScaleBytes + r * scaleBytes;
                    int i = row * scalesPerRow + b * subs + k;
                    if (factored) {
                        strip[blockCodeBytes + at] = scaleMultipliers[i];
                        if (hasMins) {
                            strip[minsAt + at] = minMultipliers[i];
                        }
                    } else {
                        putScale(strip, blockCodeBytes + at, rowScales[i], halfScales);
                        if (hasMins) {
                            putScale(strip, minsAt + at, rowMins[i], halfScales);
                        }
                    }
                }
            }
            for (int g = 0; factored && g * factorBlocks < vectorCols / block; g++) {
                int at = blockAt(g * factorBlocks) - factorBytes + r * 4;
                putScale(strip, at, factors.scaleFactors()[row * factorsPerRow + g], false);
                if (hasMins) {
                    putScale(strip, at + ROWS * 4, factors.minFactors()[row * factorsPerRow + g], false);
                }
            }
            for (int j = vectorCols; j < cols; j++) {
                tail[row * tailCols + j - vectorCols] = (byte) (int) rowLevels[j];
            }
            for (int k = 0; k < tailSubs; k++) {
                tailScales[(s * ROWS + r) * tailSubs + k] = rowScales[row * scalesPerRow + vectorCols / scaleBlock + k];
                if (hasMins) {
                    tailMins[(s * ROWS + r) * tailSubs + k] = rowMins[row * scalesPerRow + vectorCols / scaleBlock + k];
                }
            }
        }
        System.arraycopy(strip, 0, codes[s / stripsPerArray], (int) ((s % stripsPerArray) * stripBytes), strip.length);
        return small;
    }

    /** ORs {@code bits} into the 16-bit word at strip[at], in native byte order. */
    private static void orWord(byte[] strip, int at, int bits) {
        int lo = NATIVE_LITTLE ? at : at + 1;
        int hi = NATIVE_LITTLE ? at + 1 : at;
        strip[lo] |= (byte) bits;
        strip[hi] |= (byte) (bits >>> 8);
    }

    /** One row's scale (or minimum) of a block at strip[at]: fp16 or f32, in native byte order (the kernels reinterpret it). */
    private static void putScale(byte[] strip, int at, float scale, boolean half) {
        int bits = half ? Float.floatToFloat16(scale) : Float.floatToRawIntBits(scale);
        for (int k = 0; k < (half ? 2 : 4); k++) {
            strip[at + k] = (byte) (bits >>> 8 * (NATIVE_LITTLE ? k : (half ? 1 : 3) - k));
        }
    }

    /**
     * The 16-bit lane that holds row r of a strip: rows 0 .. HALF in the even lanes, rows HALF ..
     * ROWS in the odd ones. A short vector of {@link #ROWS} lanes viewed as {@link #HALF} int lanes
     * holds lanes 2i and 2i + 1 in int lane i, which two shifts sign-extend into separate int
     * vectors (converting the upper half of the shorts instead compiles to a six-instruction
     * permute on AVX2): so the first float vector holds rows 0 .. HALF in order and the second the
     * rest, and a strip's results are stored as they come, with no permutation.
     */
    static int lane(int r) {
        return r < HALF ? 2 * r : 2 * (r - HALF) + 1;
    }

    public int strips() {
        return strips;
    }

    /** Which kernel the strips take: nibbles, 5-bit words, 6-bit words, small bytes or bytes. */
    String kernel() {
        return nibbles ? "nibbles" : fiveBits ? "5-bit words" : sixBits ? "6-bit words" : smallBytes ? "small bytes" : "bytes";
    }

    /** Bytes one product over {@code rows} rows reads: the strips, and {@code rowBytes} for each row after the last strip. */
    public long bytesWithRest(int rows, long rowBytes) {
        return byteSize() + (rows - (long) strips * ROWS) * rowBytes;
    }

    /** Bytes the repacked codes and scales occupy. */
    public long byteSize() {
        return strips * stripBytes + tail.length + 4L * (tailScales.length + tailMins.length);
    }

    /**
     * The activations as the strips read them: the int8 codes, and per token and 32-column chunk
     * 8 × the chunk's code sum (the nibble correction). Made once per product, shared by all threads.
     */
    public static final class Activations {
        final Int8Activations a;
        final short[] corr;  // [tokens][cols / 32]
        /** Each 32-column chunk's code sum. */
        final int[] sums;    // [tokens][cols / 32]
        /** Each 16-column chunk's code sum, and 16 × it (the 5-bit codes' correction). */
        final int[] sums16;  // [tokens][cols / 16]
        final short[] corr16; // [tokens][cols / 16]
        /** 32 × each 8-column chunk's code sum (the 6-bit codes' correction). */
        final short[] corr8;  // [tokens][cols / 8]
        /**
         * With 32-value blocks, per token and block in one array (the factored nibble kernel's
         * reads, one range of one array): the nibble correction, the code sum, and the bits of
         * the activation scale and of scale × sum; null for other blocks.
         */
        final int[] blocks32; // [tokens][cols / 32][BLOCK_INFO]
        /** Each code as a 16-bit value twice over, so one 32-bit broadcast load fills the short lanes with it. */
        final int[] pairs;   // [tokens][cols]

        public Activations(Int8Activations a) {
            this.a = a;
            int cols = a.cols();
            int chunks = cols / 32;
            byte[] q = a.codes();
            this.pairs = new int[q.length];
            int halves = cols / 16;
            this.corr = new short[a.tokens() * chunks];
            this.sums = new int[a.tokens() * chunks];
            this.sums16 = new int[a.tokens() * halves];
            this.corr16 = new short[a.tokens() * halves];
            int eighths = cols / 8;
            this.corr8 = new short[a.tokens() * eighths];
            this.blocks32 = a.block() == 32 ? new int[BLOCK_INFO * a.tokens() * chunks] : null;
            // Made by the calling thread while the pool's workers wait: vectors of codes widened
            // to ints, each 16-column chunk's sum from them (integer sums: any order is exact).
            for (int t = 0; t < a.tokens(); t++) {
                int row = t * cols;
                for (int c = 0; c < halves; c++) {
                    int sum = 0;
                    if (Lanes.SUPPORTED) {
                        for (int j = row + c * 16; j < row + c * 16 + 16; j += Lanes.COUNT) {
                            IntVector v = (IntVector) ByteVector.fromArray(Lanes.BYTES, q, j).castShape(INTS, 0);
                            v.and(0xFFFF).or(v.lanewise(VectorOperators.LSHL, 16)).intoArray(pairs, j);
                            sum += v.reduceLanes(VectorOperators.ADD);
                        }
                    } else {
                        for (int j = row + c * 16; j < row + c * 16 + 16; j++) {
                            pairs[j] = (q[j] & 0xFFFF) | q[j] << 16;
                            sum += q[j];
                        }
                    }
                    sums16[t * halves + c] = sum;
                    corr16[t * halves + c] = (short) (16 * sum);
                }
                for (int c = 0; c < chunks; c++) {
                    int sum = sums16[t * halves + 2 * c] + sums16[t * halves + 2 * c + 1];
                    corr[t * chunks + c] = (short) (8 * sum);
                    sums[t * chunks + c] = sum;
                }
                for (int j = row + halves * 16; j < row + cols; j++) {
                    pairs[j] = (q[j] & 0xFFFF) | q[j] << 16;
                }
                if (blocks32 != null) {
                    for (int c = 0; c < chunks; c++) {
                        int i = BLOCK_INFO * (t * chunks + c);
                        float d = a.scales()[t * a.blocksPerRow() + c];
                        blocks32[i] = corr[t * chunks + c];
                        blocks32[i + 1] = sums[t * chunks + c];
                        blocks32[i + 2] = Float.floatToRawIntBits(d);
                        blocks32[i + 3] = Float.floatToRawIntBits(d * sums[t * chunks + c]);
                    }
                }
                for (int c = 0; c < eighths; c++) {
                    int sum = 0;
                    for (int j = row + c * 8; j < row + c * 8 + 8; j++) {
                        sum += q[j];
                    }
                    corr8[t * eighths + c] = (short) (32 * sum);
                }
            }
        }

        public Int8Activations codes() {
            return a;
        }
    }

    /**
     * y[yOffset + r + t × yStride] for rows [rowStart, rowEnd) (within the strips) and every token
     * of {@code x}: bitwise the scalar int8-activation product of each row. A strip the range cuts
     * is computed whole and only the range's rows written, so a split inside a strip (another
     * thread's chunk boundary) costs that strip twice, not its rows by the scalar reference: at two
     * threads, 896×896 q4_0 split at multiples of 16 rows ran at 1.1 G multiply-adds/s that way
     * against 45 for 4864×896 split at multiples of 32.
     */
    public void rows(int rowStart, int rowEnd, Activations x, float[] y, int yOffset, int yStride) {
        Int8Activations a = x.a;
        if (a.cols() != cols || a.block() != block) {
            throw new IllegalArgumentException("activations [" + a.cols() + " cols, block " + a.block()
                    + "] do not match strips [" + cols + " cols, block " + block + "]");
        }
        if (rowStart < 0 || rowEnd > strips * ROWS) {
            throw new IllegalArgumentException("rows [" + rowStart + ", " + rowEnd + ") outside the "
                    + strips * ROWS + " rows of the strips");
        }
        if (rowStart >= rowEnd) {
            return;
        }
        float[] out = new float[ROWS];
        int group = stripsPerPass();
        int stripStart = rowStart / ROWS;
        int stripEnd = (rowEnd + ROWS - 1) / ROWS;
        for (int first = stripStart; first < stripEnd; first += group) {
            int last = Math.min(stripEnd, first + group);
            for (int t = 0; t < a.tokens(); t++) {
                for (int s = first; s < last; s++) {
                    if (nibbles) {
                        stripNibbles(s, x, t, out);
                    } else if (fiveBits) {
                        stripFiveBits(s, x, t, out);
                    } else if (sixBits) {
                        stripSixBits(s, x, t, out);
                    } else if (smallBytes) {
                        stripSmallBytes(s, x, t, out);
                    } else {
                        stripBytes(s, x, t, out);
                    }
                    if (vectorCols < cols) {
                        tail(s, a, t, out);
                    }
                    int at = yOffset + s * ROWS + t * yStride;
                    int from = Math.max(0, rowStart - s * ROWS);
                    int to = Math.min(ROWS, rowEnd - s * ROWS);
                    if (from < to) {
                        System.arraycopy(out, from, y, at + from, to - from);
                    }
                }
            }
        }
    }

    /**
     * Strips taken together over the tokens of a batch: as many as fit, with one token's codes, in
     * {@link #PASS_BYTES}, so the group's codes stay in L2 from one token to the next;
     * whole-matrix passes per token would re-read all the weights from memory.
     */
    private int stripsPerPass() {
        long perToken = cols;
        return (int) Math.max(1, (PASS_BYTES - perToken) / Math.max(1, stripBytes));
    }

    private void stripNibbles(int s, Activations x, int t, float[] out) {
        if (block == 32) {
            if (factored && hasMins) {
                stripNibblesFactored(s, x, t, out);
            } else {
                stripNibbles32(s, x, t, out);
            }
            return;
        }
        byte[] c = codes[s / stripsPerArray];
        int base = (int) ((s % stripsPerArray) * stripBytes);
        int chunks = cols / 32;
        int[] q = x.pairs;
        int row = t * cols;
        int corr = t * chunks;
        int as = t * blocksPerRow;
        float[] aScales = x.a.scales();
        FloatVector acc0 = FloatVector.zero(FLOATS);
        FloatVector acc1 = acc0;
        int chunksPerBlock = block >>> 5;
        ShortVector low = ShortVector.broadcast(SHORTS, (short) 0x0F);
        // Blocks of more than 32 values are never factored: these stay zero.
        FloatVector f0 = FloatVector.zero(FLOATS);
        FloatVector f1 = f0;
        FloatVector g0 = f0;
        FloatVector g1 = f0;
        for (int b = 0; b < vectorCols / block; b++) {
            IntVector i0 = IntVector.zero(INTS);
            IntVector i1 = i0;
            int blockAt = base + b * blockStride;
            for (int k0 = b * chunksPerBlock; k0 < (b + 1) * chunksPerBlock; k0++) {
                int p = blockAt + (k0 - b * chunksPerBlock) * 16 * ROWS;
                int w = row + k0 * 32;
                ShortVector evenCols = ShortVector.zero(SHORTS);
                ShortVector oddCols = evenCols;
                for (int k = 0; k < 16; k++) {
                    ShortVector v = (ShortVector) ByteVector.fromArray(BYTES, c, p)
                            .convertShape(VectorOperators.ZERO_EXTEND_B2S, SHORTS, 0);
                    evenCols = evenCols.add(v.and(low).mul(IntVector.broadcast(INTS, q[w]).reinterpretAsShorts()));
                    oddCols = oddCols.add(v.lanewise(VectorOperators.LSHR, 4).mul(IntVector.broadcast(INTS, q[w + 1]).reinterpretAsShorts()));
                    p += ROWS;
                    w += 2;
                }
                ShortVector sum = evenCols.add(oddCols).sub(x.corr[corr + k0]);
                IntVector pairs = sum.reinterpretAsInts();
                i0 = i0.add(pairs.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16));
                i1 = i1.add(pairs.lanewise(VectorOperators.ASHR, 16));
            }
            int csum = levelBias != 0 || hasMins ? blockSum(x, t, b) : 0;
            if (levelBias != 0) {
                i0 = i0.add(levelBias * csum);
                i1 = i1.add(levelBias * csum);
            }
            FloatVector d = FloatVector.broadcast(FLOATS, aScales[as + b]);
            int at = blockAt + blockCodeBytes;
            FloatVector w0 = (factored ? ((FloatVector) ByteVector.fromArray(MULTIPLIER_BYTES, c, at)
                    .convertShape(VectorOperators.B2F, FLOATS, 0)).mul(f0)
                    : halfScales ? ((IntVector) ByteVector.fromArray(HALF_SCALE_BYTES, c, at).reinterpretAsShorts()
                    .convertShape(VectorOperators.S2I, INTS, 0)).lanewise(VectorOperators.LSHL, 13).and(SIGN_EXPONENT_MANTISSA)
                    .reinterpretAsFloats().mul(0x1p112f) : ByteVector.fromArray(FLOAT_SCALE_BYTES, c, at).reinterpretAsFloats());
            acc0 = acc0.add(((FloatVector) i0.convert(VectorOperators.I2F, 0)).mul(w0.mul(d)));
            FloatVector w1 = (factored ? ((FloatVector) ByteVector.fromArray(MULTIPLIER_BYTES, c, at + oddScales)
                    .convertShape(VectorOperators.B2F, FLOATS, 0)).mul(f1)
                    : halfScales ? ((IntVector) ByteVector.fromArray(HALF_SCALE_BYTES, c, at + oddScales).reinterpretAsShorts()
                    .convertShape(VectorOperators.S2I, INTS, 0)).lanewise(VectorOperators.LSHL, 13).and(SIGN_EXPONENT_MANTISSA)
                    .reinterpretAsFloats().mul(0x1p112f) : ByteVector.fromArray(FLOAT_SCALE_BYTES, c, at + oddScales).reinterpretAsFloats());
            acc1 = acc1.add(((FloatVector) i1.convert(VectorOperators.I2F, 0)).mul(w1.mul(d)));
            if (hasMins) {
                FloatVector am = FloatVector.broadcast(FLOATS, aScales[as + b] * csum);
                FloatVector m0 = (factored ? ((FloatVector) ByteVector.fromArray(MULTIPLIER_BYTES, c, blockAt + minsAt)
                        .convertShape(VectorOperators.B2F, FLOATS, 0)).mul(g0)
                        : halfScales ? ((IntVector) ByteVector.fromArray(HALF_SCALE_BYTES, c, blockAt + minsAt).reinterpretAsShorts()
                        .convertShape(VectorOperators.S2I, INTS, 0)).lanewise(VectorOperators.LSHL, 13).and(SIGN_EXPONENT_MANTISSA)
                        .reinterpretAsFloats().mul(0x1p112f) : ByteVector.fromArray(FLOAT_SCALE_BYTES, c, blockAt + minsAt).reinterpretAsFloats());
                acc0 = acc0.add(m0.mul(am));
                FloatVector m1 = (factored ? ((FloatVector) ByteVector.fromArray(MULTIPLIER_BYTES, c, blockAt + minsAt + oddScales)
                        .convertShape(VectorOperators.B2F, FLOATS, 0)).mul(g1)
                        : halfScales ? ((IntVector) ByteVector.fromArray(HALF_SCALE_BYTES, c, blockAt + minsAt + oddScales).reinterpretAsShorts()
                        .convertShape(VectorOperators.S2I, INTS, 0)).lanewise(VectorOperators.LSHL, 13).and(SIGN_EXPONENT_MANTISSA)
                        .reinterpretAsFloats().mul(0x1p112f) : ByteVector.fromArray(FLOAT_SCALE_BYTES, c, blockAt + minsAt + oddScales).reinterpretAsFloats());
                acc1 = acc1.add(m1.mul(am));
            }
        }
        acc0.intoArray(out, 0);
        acc1.intoArray(out, HALF);
    }

    /**
     * {@link #stripNibbles32} for q4_k: byte scales and minima times their group's factors, the
     * level offset added back, in straight-line code with the factors loaded once per group and
     * each block's activation terms read from one array ({@link Activations#blocks32}). Compiled
     * by C2 for q4_k, the general kernel held more instructions and stack references than q4_0's
     * for the same 16-column loop (per-block indices, range checks, reloads of spilled registers);
     * this one is faster on q4_k, and the same treatment of q5_k's words was not (docs/kquants.md).
     */
    private void stripNibblesFactored(int s, Activations x, int t, float[] out) {
        byte[] c = codes[s / stripsPerArray];
        int base = (int) ((s % stripsPerArray) * stripBytes);
        int blocks = vectorCols >>> 5;
        int[] q = x.pairs;
        int row = t * cols;
        int[] blockInfo = x.blocks32;
        int info = BLOCK_INFO * t * (cols >>> 5);
        int bias = levelBias;
        FloatVector acc0 = FloatVector.zero(FLOATS);
        FloatVector acc1 = acc0;
        ShortVector low = ShortVector.broadcast(SHORTS, (short) 0x0F);
        for (int first = 0; first < blocks; first += factorBlocks) {
            int head = base + first * blockStride + (first >>> factorShift) * factorBytes;
            FloatVector f0 = ByteVector.fromArray(FLOAT_SCALE_BYTES, c, head).reinterpretAsFloats();
            FloatVector f1 = ByteVector.fromArray(FLOAT_SCALE_BYTES, c, head + 4 * HALF).reinterpretAsFloats();
            FloatVector g0 = ByteVector.fromArray(FLOAT_SCALE_BYTES, c, head + 4 * ROWS).reinterpretAsFloats();
            FloatVector g1 = ByteVector.fromArray(FLOAT_SCALE_BYTES, c, head + 4 * (ROWS + HALF)).reinterpretAsFloats();
            int end = Math.min(blocks, first + factorBlocks);
            int blockAt = head + factorBytes;
            for (int b = first; b < end; b++) {
                int p = blockAt;
                int w = row + b * 32;
                ShortVector evenCols = ShortVector.zero(SHORTS);
                ShortVector oddCols = evenCols;
                for (int k = 0; k < 16; k++) {
                    ShortVector v = (ShortVector) ByteVector.fromArray(BYTES, c, p)
                            .convertShape(VectorOperators.ZERO_EXTEND_B2S, SHORTS, 0);
                    evenCols = evenCols.add(v.and(low).mul(IntVector.broadcast(INTS, q[w]).reinterpretAsShorts()));
                    oddCols = oddCols.add(v.lanewise(VectorOperators.LSHR, 4).mul(IntVector.broadcast(INTS, q[w + 1]).reinterpretAsShorts()));
                    p += ROWS;
                    w += 2;
                }
                int i = info + BLOCK_INFO * b;
                IntVector pairs = evenCols.add(oddCols).sub((short) blockInfo[i]).reinterpretAsInts();
                int biased = bias * blockInfo[i + 1];
                IntVector even = pairs.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).add(biased);
                IntVector odd = pairs.lanewise(VectorOperators.ASHR, 16).add(biased);
                FloatVector d = FloatVector.broadcast(FLOATS, Float.intBitsToFloat(blockInfo[i + 2]));
                int at = blockAt + blockCodeBytes;
                FloatVector w0 = ((FloatVector) ByteVector.fromArray(MULTIPLIER_BYTES, c, at)
                        .convertShape(VectorOperators.B2F, FLOATS, 0)).mul(f0);
                FloatVector w1 = ((FloatVector) ByteVector.fromArray(MULTIPLIER_BYTES, c, at + oddScales)
                        .convertShape(VectorOperators.B2F, FLOATS, 0)).mul(f1);
                FloatVector am = FloatVector.broadcast(FLOATS, Float.intBitsToFloat(blockInfo[i + 3]));
                FloatVector m0 = ((FloatVector) ByteVector.fromArray(MULTIPLIER_BYTES, c, blockAt + minsAt)
                        .convertShape(VectorOperators.B2F, FLOATS, 0)).mul(g0);
                FloatVector m1 = ((FloatVector) ByteVector.fromArray(MULTIPLIER_BYTES, c, blockAt + minsAt + oddScales)
                        .convertShape(VectorOperators.B2F, FLOATS, 0)).mul(g1);
                acc0 = acc0.add(((FloatVector) even.convert(VectorOperators.I2F, 0)).mul(w0.mul(d))).add(m0.mul(am));
                acc1 = acc1.add(((FloatVector) odd.convert(VectorOperators.I2F, 0)).mul(w1.mul(d))).add(m1.mul(am));
                blockAt += blockStride;
            }
        }
        acc0.intoArray(out, 0);
        acc1.intoArray(out, HALF);
    }

    /** {@link #stripNibbles} for 32-value blocks: one chunk per block, its sum converted straight to floats. */
    private void stripNibbles32(int s, Activations x, int t, float[] out) {
        byte[] c = codes[s / stripsPerArray];
        int base = (int) ((s % stripsPerArray) * stripBytes);
        int blocks = vectorCols >>> 5;
        int[] q = x.pairs;
        int row = t * cols;
        int corr = t * (cols >>> 5);
        int as = t * blocksPerRow;
        float[] aScales = x.a.scales();
        FloatVector acc0 = FloatVector.zero(FLOATS);
        FloatVector acc1 = acc0;
        ShortVector low = ShortVector.broadcast(SHORTS, (short) 0x0F);
        FloatVector f0 = FloatVector.zero(FLOATS);
        FloatVector f1 = f0;
        FloatVector g0 = f0;
        FloatVector g1 = f0;
        for (int b = 0; b < blocks; b++) {
            int blockAt = base + b * blockStride + ((b >>> factorShift) + 1) * factorBytes;
            if (factored && (b & (factorBlocks - 1)) == 0) {
                // A new group: its factors, at its head, for the scales (and minima) of its blocks.
                f0 = ByteVector.fromArray(FLOAT_SCALE_BYTES, c, blockAt - factorBytes).reinterpretAsFloats();
                f1 = ByteVector.fromArray(FLOAT_SCALE_BYTES, c, blockAt - factorBytes + 4 * HALF).reinterpretAsFloats();
                if (hasMins) {
                    g0 = ByteVector.fromArray(FLOAT_SCALE_BYTES, c, blockAt - factorBytes + 4 * ROWS).reinterpretAsFloats();
                    g1 = ByteVector.fromArray(FLOAT_SCALE_BYTES, c, blockAt - factorBytes + 4 * (ROWS + HALF)).reinterpretAsFloats();
                }
            }
            int p = blockAt;
            int w = row + b * 32;
            ShortVector evenCols = ShortVector.zero(SHORTS);
            ShortVector oddCols = evenCols;
            for (int k = 0; k < 16; k++) {
                ShortVector v = (ShortVector) ByteVector.fromArray(BYTES, c, p)
                        .convertShape(VectorOperators.ZERO_EXTEND_B2S, SHORTS, 0);
                evenCols = evenCols.add(v.and(low).mul(IntVector.broadcast(INTS, q[w]).reinterpretAsShorts()));
                oddCols = oddCols.add(v.lanewise(VectorOperators.LSHR, 4).mul(IntVector.broadcast(INTS, q[w + 1]).reinterpretAsShorts()));
                p += ROWS;
                w += 2;
            }
            ShortVector sum = evenCols.add(oddCols).sub(x.corr[corr + b]);
            FloatVector d = FloatVector.broadcast(FLOATS, aScales[as + b]);
            int at = blockAt + blockCodeBytes;
            IntVector pairs = sum.reinterpretAsInts();
            IntVector even = pairs.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16);
            IntVector odd = pairs.lanewise(VectorOperators.ASHR, 16);
            int csum = levelBias != 0 || hasMins ? x.sums[corr + b] : 0;
            if (levelBias != 0) {
                even = even.add(levelBias * csum);
                odd = odd.add(levelBias * csum);
            }
            FloatVector w0 = (factored ? ((FloatVector) ByteVector.fromArray(MULTIPLIER_BYTES, c, at)
                    .convertShape(VectorOperators.B2F, FLOATS, 0)).mul(f0)
                    : halfScales ? ((IntVector) ByteVector.fromArray(HALF_SCALE_BYTES, c, at).reinterpretAsShorts()
                    .convertShape(VectorOperators.S2I, INTS, 0)).lanewise(VectorOperators.LSHL, 13).and(SIGN_EXPONENT_MANTISSA)
                    .reinterpretAsFloats().mul(0x1p112f) : ByteVector.fromArray(FLOAT_SCALE_BYTES, c, at).reinterpretAsFloats());
            acc0 = acc0.add(((FloatVector) even.convert(VectorOperators.I2F, 0)).mul(w0.mul(d)));
            FloatVector w1 = (factored ? ((FloatVector) ByteVector.fromArray(MULTIPLIER_BYTES, c, at + oddScales)
                    .convertShape(VectorOperators.B2F, FLOATS, 0)).mul(f1)
                    : halfScales ? ((IntVector) ByteVector.fromArray(HALF_SCALE_BYTES, c, at + oddScales).reinterpretAsShorts()
                    .convertShape(VectorOperators.S2I, INTS, 0)).lanewise(VectorOperators.LSHL, 13).and(SIGN_EXPONENT_MANTISSA)
                    .reinterpretAsFloats().mul(0x1p112f) : ByteVector.fromArray(FLOAT_SCALE_BYTES, c, at + oddScales).reinterpretAsFloats());
            acc1 = acc1.add(((FloatVector) odd.convert(VectorOperators.I2F, 0)).mul(w1.mul(d)));
            if (hasMins) {
                FloatVector am = FloatVector.broadcast(FLOATS, aScales[as + b] * csum);
                FloatVector m0 = (factored ? ((FloatVector) ByteVector.fromArray(MULTIPLIER_BYTES, c, blockAt + minsAt)
                        .convertShape(VectorOperators.B2F, FLOATS, 0)).mul(g0)
                        : halfScales ? ((IntVector) ByteVector.fromArray(HALF_SCALE_BYTES, c, blockAt + minsAt).reinterpretAsShorts()
                        .convertShape(VectorOperators.S2I, INTS, 0)).lanewise(VectorOperators.LSHL, 13).and(SIGN_EXPONENT_MANTISSA)
                        .reinterpretAsFloats().mul(0x1p112f) : ByteVector.fromArray(FLOAT_SCALE_BYTES, c, blockAt + minsAt).reinterpretAsFloats());
                acc0 = acc0.add(m0.mul(am));
                FloatVector m1 = (factored ? ((FloatVector) ByteVector.fromArray(MULTIPLIER_BYTES, c, blockAt + minsAt + oddScales)
                        .convertShape(VectorOperators.B2F, FLOATS, 0)).mul(g1)
                        : halfScales ? ((IntVector) ByteVector.fromArray(HALF_SCALE_BYTES, c, blockAt + minsAt + oddScales).reinterpretAsShorts()
                        .convertShape(VectorOperators.S2I, INTS, 0)).lanewise(VectorOperators.LSHL, 13).and(SIGN_EXPONENT_MANTISSA)
                        .reinterpretAsFloats().mul(0x1p112f) : ByteVector.fromArray(FLOAT_SCALE_BYTES, c, blockAt + minsAt + oddScales).reinterpretAsFloats());
                acc1 = acc1.add(m1.mul(am));
            }
        }
        acc0.intoArray(out, 0);
        acc1.intoArray(out, HALF);
    }

    /**
     * 8-bit levels: each column pair's two products summed in 16 bits, then sign-extended into the
     * even and odd lanes' 32-bit sums. Biasing the pair sums by 2^15 into unsigned halves saves one
     * of those five operations per pair (sum the int view and its upper halves; the lower sums are
     * the difference) and gives the same bits, but measured no faster: MatVecBenchmark q8_0
     * 4864×896 hot, one thread, 9.2/12.0/11.5 vs 10.7/11.7/10.7 G multiply-adds/s; whole-model
     * q8_0 decode at two threads, five alternating pairs: -18%, -15%, +10%, -2%, -7% for the
     * biased variant. Not kept.
     */
    private void stripBytes(int s, Activations x, int t, float[] out) {
        byte[] c = codes[s / stripsPerArray];
        int base = (int) ((s % stripsPerArray) * stripBytes);
        int[] q = x.pairs;
        int row = t * cols;
        int as = t * blocksPerRow;
        float[] aScales = x.a.scales();
        FloatVector acc0 = FloatVector.zero(FLOATS);
        FloatVector acc1 = acc0;
        FloatVector f0 = FloatVector.zero(FLOATS);
        FloatVector f1 = f0;
        FloatVector g0 = f0;
        FloatVector g1 = f0;
        for (int b = 0; b < vectorCols / block; b++) {
            IntVector i0 = IntVector.zero(INTS);
            IntVector i1 = i0;
            int blockAt = base + b * blockStride + ((b >>> factorShift) + 1) * factorBytes;
            if (factored && (b & (factorBlocks - 1)) == 0) {
                // A new group: its factors, at its head, for the scales (and minima) of its blocks.
                f0 = ByteVector.fromArray(FLOAT_SCALE_BYTES, c, blockAt - factorBytes).reinterpretAsFloats();
                f1 = ByteVector.fromArray(FLOAT_SCALE_BYTES, c, blockAt - factorBytes + 4 * HALF).reinterpretAsFloats();
                if (hasMins) {
                    g0 = ByteVector.fromArray(FLOAT_SCALE_BYTES, c, blockAt - factorBytes + 4 * ROWS).reinterpretAsFloats();
                    g1 = ByteVector.fromArray(FLOAT_SCALE_BYTES, c, blockAt - factorBytes + 4 * (ROWS + HALF)).reinterpretAsFloats();
                }
            }
            int p = blockAt;
            int w = row + b * block;
            for (int k = 0; k < block; k += 2) {
                ShortVector v = (ShortVector) ByteVector.fromArray(BYTES, c, p)
                        .convertShape(VectorOperators.B2S, SHORTS, 0);
                ShortVector u = (ShortVector) ByteVector.fromArray(BYTES, c, p + ROWS)
                        .convertShape(VectorOperators.B2S, SHORTS, 0);
                ShortVector pair = v.mul(IntVector.broadcast(INTS, q[w]).reinterpretAsShorts())
                        .add(u.mul(IntVector.broadcast(INTS, q[w + 1]).reinterpretAsShorts()));
                IntVector pairs = pair.reinterpretAsInts();
                i0 = i0.add(pairs.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16));
                i1 = i1.add(pairs.lanewise(VectorOperators.ASHR, 16));
                p += 2 * ROWS;
                w += 2;
                if (((k + 2) & (scaleBlock - 1)) == 0) {
                    // The end of a scale sub-block: its exact sum times (weight scale × activation scale).
                    int sub = k / scaleBlock;
                    int csum = levelBias != 0 || hasMins ? codeSum(x, t, b * block + sub * scaleBlock) : 0;
                    if (levelBias != 0) {
                        i0 = i0.add(levelBias * csum);
                        i1 = i1.add(levelBias * csum);
                    }
                    FloatVector d = FloatVector.broadcast(FLOATS, aScales[as + b]);
                    int at = blockAt + blockCodeBytes + sub * subScaleBytes;
                    FloatVector w0 = (factored ? ((FloatVector) ByteVector.fromArray(MULTIPLIER_BYTES, c, at)
                            .convertShape(VectorOperators.B2F, FLOATS, 0)).mul(f0)
                            : halfScales ? ((IntVector) ByteVector.fromArray(HALF_SCALE_BYTES, c, at).reinterpretAsShorts()
                            .convertShape(VectorOperators.S2I, INTS, 0)).lanewise(VectorOperators.LSHL, 13).and(SIGN_EXPONENT_MANTISSA)
                            .reinterpretAsFloats().mul(0x1p112f) : ByteVector.fromArray(FLOAT_SCALE_BYTES, c, at).reinterpretAsFloats());
                    acc0 = acc0.add(((FloatVector) i0.convert(VectorOperators.I2F, 0)).mul(w0.mul(d)));
                    FloatVector w1 = (factored ? ((FloatVector) ByteVector.fromArray(MULTIPLIER_BYTES, c, at + oddScales)
                            .convertShape(VectorOperators.B2F, FLOATS, 0)).mul(f1)
                            : halfScales ? ((IntVector) ByteVector.fromArray(HALF_SCALE_BYTES, c, at + oddScales).reinterpretAsShorts()
                            .convertShape(VectorOperators.S2I, INTS, 0)).lanewise(VectorOperators.LSHL, 13).and(SIGN_EXPONENT_MANTISSA)
                            .reinterpretAsFloats().mul(0x1p112f) : ByteVector.fromArray(FLOAT_SCALE_BYTES, c, at + oddScales).reinterpretAsFloats());
                    acc1 = acc1.add(((FloatVector) i1.convert(VectorOperators.I2F, 0)).mul(w1.mul(d)));
                    if (hasMins) {
                        FloatVector am = FloatVector.broadcast(FLOATS, aScales[as + b] * csum);
                        int m = blockAt + minsAt + sub * subScaleBytes;
                        FloatVector m0 = (factored ? ((FloatVector) ByteVector.fromArray(MULTIPLIER_BYTES, c, m)
                                .convertShape(VectorOperators.B2F, FLOATS, 0)).mul(g0)
                                : halfScales ? ((IntVector) ByteVector.fromArray(HALF_SCALE_BYTES, c, m).reinterpretAsShorts()
                                .convertShape(VectorOperators.S2I, INTS, 0)).lanewise(VectorOperators.LSHL, 13).and(SIGN_EXPONENT_MANTISSA)
                                .reinterpretAsFloats().mul(0x1p112f) : ByteVector.fromArray(FLOAT_SCALE_BYTES, c, m).reinterpretAsFloats());
                        acc0 = acc0.add(m0.mul(am));
                        FloatVector m1 = (factored ? ((FloatVector) ByteVector.fromArray(MULTIPLIER_BYTES, c, m + oddScales)
                                .convertShape(VectorOperators.B2F, FLOATS, 0)).mul(g1)
                                : halfScales ? ((IntVector) ByteVector.fromArray(HALF_SCALE_BYTES, c, m + oddScales).reinterpretAsShorts()
                                .convertShape(VectorOperators.S2I, INTS, 0)).lanewise(VectorOperators.LSHL, 13).and(SIGN_EXPONENT_MANTISSA)
                                .reinterpretAsFloats().mul(0x1p112f) : ByteVector.fromArray(FLOAT_SCALE_BYTES, c, m + oddScales).reinterpretAsFloats());
                        acc1 = acc1.add(m1.mul(am));
                    }
                    i0 = IntVector.zero(INTS);
                    i1 = i0;
                }
            }
        }
        acc0.intoArray(out, 0);
        acc1.intoArray(out, HALF);
    }

    /**
     * {@link #stripBytes} for byte levels in [−32, 32] (q6_k's −32..31, q3_k's and q2_k's smaller
     * ones): a product is at most 32 × 127 = 4064 in magnitude, so the 16-bit lanes sum eight
     * columns exactly before they are sign-extended into the 32-bit sums, where the byte kernel
     * extends every pair: per eight columns 37 vector instructions instead of 48. Measured on q6_k
     * and q3_k it gained nothing over the byte kernel: their bytes, not the instructions, bound
     * them (docs/kquants.md).
     */
    private void stripSmallBytes(int s, Activations x, int t, float[] out) {
        byte[] c = codes[s / stripsPerArray];
        int base = (int) ((s % stripsPerArray) * stripBytes);
        int[] q = x.pairs;
        int row = t * cols;
        int as = t * blocksPerRow;
        float[] aScales = x.a.scales();
        FloatVector acc0 = FloatVector.zero(FLOATS);
        FloatVector acc1 = acc0;
        FloatVector f0 = FloatVector.zero(FLOATS);
        FloatVector f1 = f0;
        FloatVector g0 = f0;
        FloatVector g1 = f0;
        for (int b = 0; b < vectorCols / block; b++) {
            IntVector i0 = IntVector.zero(INTS);
            IntVector i1 = i0;
            int blockAt = base + b * blockStride + ((b >>> factorShift) + 1) * factorBytes;
            if (factored && (b & (factorBlocks - 1)) == 0) {
                // A new group: its factors, at its head, for the scales (and minima) of its blocks.
                f0 = ByteVector.fromArray(FLOAT_SCALE_BYTES, c, blockAt - factorBytes).reinterpretAsFloats();
                f1 = ByteVector.fromArray(FLOAT_SCALE_BYTES, c, blockAt - factorBytes + 4 * HALF).reinterpretAsFloats();
                if (hasMins) {
                    g0 = ByteVector.fromArray(FLOAT_SCALE_BYTES, c, blockAt - factorBytes + 4 * ROWS).reinterpretAsFloats();
                    g1 = ByteVector.fromArray(FLOAT_SCALE_BYTES, c, blockAt - factorBytes + 4 * (ROWS + HALF)).reinterpretAsFloats();
                }
            }
            int p = blockAt;
            int w = row + b * block;
            ShortVector evenCols = ShortVector.zero(SHORTS);
            ShortVector oddCols = evenCols;
            for (int k = 0; k < block; k += 2) {
                ShortVector v = (ShortVector) ByteVector.fromArray(BYTES, c, p)
                        .convertShape(VectorOperators.B2S, SHORTS, 0);
                ShortVector u = (ShortVector) ByteVector.fromArray(BYTES, c, p + ROWS)
                        .convertShape(VectorOperators.B2S, SHORTS, 0);
                evenCols = evenCols.add(v.mul(IntVector.broadcast(INTS, q[w]).reinterpretAsShorts()));
                oddCols = oddCols.add(u.mul(IntVector.broadcast(INTS, q[w + 1]).reinterpretAsShorts()));
                p += 2 * ROWS;
                w += 2;
                if (((k + 2) & 7) == 0) {
                    // Eight columns: at most 8 × 32 × 127 = 32512 in magnitude, exact in 16 bits.
                    IntVector pairs = evenCols.add(oddCols).reinterpretAsInts();
                    i0 = i0.add(pairs.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16));
                    i1 = i1.add(pairs.lanewise(VectorOperators.ASHR, 16));
                    evenCols = ShortVector.zero(SHORTS);
                    oddCols = evenCols;
                }
                if (((k + 2) & (scaleBlock - 1)) == 0) {
                    // The end of a scale sub-block: its exact sum times (weight scale × activation scale).
                    int sub = k / scaleBlock;
                    int csum = levelBias != 0 || hasMins ? codeSum(x, t, b * block + sub * scaleBlock) : 0;
                    if (levelBias != 0) {
                        i0 = i0.add(levelBias * csum);
                        i1 = i1.add(levelBias * csum);
                    }
                    FloatVector d = FloatVector.broadcast(FLOATS, aScales[as + b]);
                    int at = blockAt + blockCodeBytes + sub * subScaleBytes;
                    FloatVector w0 = (factored ? ((FloatVector) ByteVector.fromArray(MULTIPLIER_BYTES, c, at)
                            .convertShape(VectorOperators.B2F, FLOATS, 0)).mul(f0)
                            : halfScales ? ((IntVector) ByteVector.fromArray(HALF_SCALE_BYTES, c, at).reinterpretAsShorts()
                            .convertShape(VectorOperators.S2I, INTS, 0)).lanewise(VectorOperators.LSHL, 13).and(SIGN_EXPONENT_MANTISSA)
                            .reinterpretAsFloats().mul(0x1p112f) : ByteVector.fromArray(FLOAT_SCALE_BYTES, c, at).reinterpretAsFloats());
                    acc0 = acc0.add(((FloatVector) i0.convert(VectorOperators.I2F, 0)).mul(w0.mul(d)));
                    FloatVector w1 = (factored ? ((FloatVector) ByteVector.fromArray(MULTIPLIER_BYTES, c, at + oddScales)
                            .convertShape(VectorOperators.B2F, FLOATS, 0)).mul(f1)
                            : halfScales ? ((IntVector) ByteVector.fromArray(HALF_SCALE_BYTES, c, at + oddScales).reinterpretAsShorts()
                            .convertShape(VectorOperators.S2I, INTS, 0)).lanewise(VectorOperators.LSHL, 13).and(SIGN_EXPONENT_MANTISSA)
                            .reinterpretAsFloats().mul(0x1p112f) : ByteVector.fromArray(FLOAT_SCALE_BYTES, c, at + oddScales).reinterpretAsFloats());
                    acc1 = acc1.add(((FloatVector) i1.convert(VectorOperators.I2F, 0)).mul(w1.mul(d)));
                    if (hasMins) {
                        FloatVector am = FloatVector.broadcast(FLOATS, aScales[as + b] * csum);
                        int m = blockAt + minsAt + sub * subScaleBytes;
                        FloatVector m0 = (factored ? ((FloatVector) ByteVector.fromArray(MULTIPLIER_BYTES, c, m)
                                .convertShape(VectorOperators.B2F, FLOATS, 0)).mul(g0)
                                : halfScales ? ((IntVector) ByteVector.fromArray(HALF_SCALE_BYTES, c, m).reinterpretAsShorts()
                                .convertShape(VectorOperators.S2I, INTS, 0)).lanewise(VectorOperators.LSHL, 13).and(SIGN_EXPONENT_MANTISSA)
                                .reinterpretAsFloats().mul(0x1p112f) : ByteVector.fromArray(FLOAT_SCALE_BYTES, c, m).reinterpretAsFloats());
                        acc0 = acc0.add(m0.mul(am));
                        FloatVector m1 = (factored ? ((FloatVector) ByteVector.fromArray(MULTIPLIER_BYTES, c, m + oddScales)
                                .convertShape(VectorOperators.B2F, FLOATS, 0)).mul(g1)
                                : halfScales ? ((IntVector) ByteVector.fromArray(HALF_SCALE_BYTES, c, m + oddScales).reinterpretAsShorts()
                                .convertShape(VectorOperators.S2I, INTS, 0)).lanewise(VectorOperators.LSHL, 13).and(SIGN_EXPONENT_MANTISSA)
                                .reinterpretAsFloats().mul(0x1p112f) : ByteVector.fromArray(FLOAT_SCALE_BYTES, c, m + oddScales).reinterpretAsFloats());
                        acc1 = acc1.add(m1.mul(am));
                    }
                    i0 = IntVector.zero(INTS);
                    i1 = i0;
                }
            }
        }
        acc0.intoArray(out, 0);
        acc1.intoArray(out, HALF);
    }

    /**
     * 5-bit levels (q5_0, q5_1, q5_k), stored as codes c = level − levelBias + 16 in 0..31, three
     * to a 16-bit word ({@link #FIVE_BIT_WORDS} words per row and block: 5.5 bits per weight, as
     * the formats store them), so a load gives each row's word in its lane and a shift and a mask
     * give a code, with no widening. Per 16 columns the wrapping 16-bit sum of c × a less
     * 16 × Σ a is exact (|Σ (c − 16) a| ≤ 16 × 127 × 16 = 32512; 17 columns could overflow): so
     * two sums per block, columns 0..15 and 16..31, each sign-extended into the 32-bit sums.
     */
    private void stripFiveBits(int s, Activations x, int t, float[] out) {
        byte[] c = codes[s / stripsPerArray];
        int base = (int) ((s % stripsPerArray) * stripBytes);
        int blocks = vectorCols >>> 5;
        int[] q = x.pairs;
        int row = t * cols;
        int chunks = t * (cols >>> 5);
        int halves = t * (cols >>> 4);
        int as = t * blocksPerRow;
        float[] aScales = x.a.scales();
        FloatVector acc0 = FloatVector.zero(FLOATS);
        FloatVector acc1 = acc0;
        ShortVector mask = ShortVector.broadcast(SHORTS, (short) 31);
        FloatVector f0 = FloatVector.zero(FLOATS);
        FloatVector f1 = f0;
        FloatVector g0 = f0;
        FloatVector g1 = f0;
        for (int b = 0; b < blocks; b++) {
            int blockAt = base + b * blockStride + ((b >>> factorShift) + 1) * factorBytes;
            if (factored && (b & (factorBlocks - 1)) == 0) {
                // A new group: its factors, at its head, for the scales (and minima) of its blocks.
                f0 = ByteVector.fromArray(FLOAT_SCALE_BYTES, c, blockAt - factorBytes).reinterpretAsFloats();
                f1 = ByteVector.fromArray(FLOAT_SCALE_BYTES, c, blockAt - factorBytes + 4 * HALF).reinterpretAsFloats();
                if (hasMins) {
                    g0 = ByteVector.fromArray(FLOAT_SCALE_BYTES, c, blockAt - factorBytes + 4 * ROWS).reinterpretAsFloats();
                    g1 = ByteVector.fromArray(FLOAT_SCALE_BYTES, c, blockAt - factorBytes + 4 * (ROWS + HALF)).reinterpretAsFloats();
                }
            }
            int p = blockAt;
            int w = row + b * 32;
            ShortVector lowCols = ShortVector.zero(SHORTS);
            ShortVector highCols = lowCols;
            for (int k = 0; k < 5; k++) {
                ShortVector u = ByteVector.fromArray(WORD_BYTES, c, p).reinterpretAsShorts();
                ShortVector v = ByteVector.fromArray(WORD_BYTES, c, p + 10 * ROWS).reinterpretAsShorts();
                // A word's three products summed first: one add per word on each running sum.
                lowCols = lowCols.add(u.and(mask).mul(IntVector.broadcast(INTS, q[w]).reinterpretAsShorts())
                        .add(u.lanewise(VectorOperators.LSHR, 5).and(mask).mul(IntVector.broadcast(INTS, q[w + 1]).reinterpretAsShorts()))
                        .add(u.lanewise(VectorOperators.LSHR, 10).mul(IntVector.broadcast(INTS, q[w + 2]).reinterpretAsShorts())));
                highCols = highCols.add(v.and(mask).mul(IntVector.broadcast(INTS, q[w + 16]).reinterpretAsShorts())
                        .add(v.lanewise(VectorOperators.LSHR, 5).and(mask).mul(IntVector.broadcast(INTS, q[w + 17]).reinterpretAsShorts()))
                        .add(v.lanewise(VectorOperators.LSHR, 10).mul(IntVector.broadcast(INTS, q[w + 18]).reinterpretAsShorts())));
                p += 2 * ROWS;
                w += 3;
            }
            ShortVector last = ByteVector.fromArray(WORD_BYTES, c, blockAt + 20 * ROWS).reinterpretAsShorts();
            w = row + b * 32;
            lowCols = lowCols.add(last.and(mask).mul(IntVector.broadcast(INTS, q[w + 15]).reinterpretAsShorts()))
                    .sub(x.corr16[halves + 2 * b]);
            highCols = highCols.add(last.lanewise(VectorOperators.LSHR, 5).mul(IntVector.broadcast(INTS, q[w + 31]).reinterpretAsShorts()))
                    .sub(x.corr16[halves + 2 * b + 1]);
            IntVector lowPairs = lowCols.reinterpretAsInts();
            IntVector highPairs = highCols.reinterpretAsInts();
            IntVector even = lowPairs.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16)
                    .add(highPairs.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16));
            IntVector odd = lowPairs.lanewise(VectorOperators.ASHR, 16).add(highPairs.lanewise(VectorOperators.ASHR, 16));
            int csum = levelBias != 0 || hasMins ? x.sums[chunks + b] : 0;
            if (levelBias != 0) {
                even = even.add(levelBias * csum);
                odd = odd.add(levelBias * csum);
            }
            FloatVector d = FloatVector.broadcast(FLOATS, aScales[as + b]);
            int at = blockAt + blockCodeBytes;
            FloatVector w0 = (factored ? ((FloatVector) ByteVector.fromArray(MULTIPLIER_BYTES, c, at)
                    .convertShape(VectorOperators.B2F, FLOATS, 0)).mul(f0)
                    : halfScales ? ((IntVector) ByteVector.fromArray(HALF_SCALE_BYTES, c, at).reinterpretAsShorts()
                    .convertShape(VectorOperators.S2I, INTS, 0)).lanewise(VectorOperators.LSHL, 13).and(SIGN_EXPONENT_MANTISSA)
                    .reinterpretAsFloats().mul(0x1p112f) : ByteVector.fromArray(FLOAT_SCALE_BYTES, c, at).reinterpretAsFloats());
            acc0 = acc0.add(((FloatVector) even.convert(VectorOperators.I2F, 0)).mul(w0.mul(d)));
            FloatVector w1 = (factored ? ((FloatVector) ByteVector.fromArray(MULTIPLIER_BYTES, c, at + oddScales)
                    .convertShape(VectorOperators.B2F, FLOATS, 0)).mul(f1)
                    : halfScales ? ((IntVector) ByteVector.fromArray(HALF_SCALE_BYTES, c, at + oddScales).reinterpretAsShorts()
                    .convertShape(VectorOperators.S2I, INTS, 0)).lanewise(VectorOperators.LSHL, 13).and(SIGN_EXPONENT_MANTISSA)
                    .reinterpretAsFloats().mul(0x1p112f) : ByteVector.fromArray(FLOAT_SCALE_BYTES, c, at + oddScales).reinterpretAsFloats());
            acc1 = acc1.add(((FloatVector) odd.convert(VectorOperators.I2F, 0)).mul(w1.mul(d)));
            if (hasMins) {
                FloatVector am = FloatVector.broadcast(FLOATS, aScales[as + b] * csum);
                FloatVector m0 = (factored ? ((FloatVector) ByteVector.fromArray(MULTIPLIER_BYTES, c, blockAt + minsAt)
                        .convertShape(VectorOperators.B2F, FLOATS, 0)).mul(g0)
                        : halfScales ? ((IntVector) ByteVector.fromArray(HALF_SCALE_BYTES, c, blockAt + minsAt).reinterpretAsShorts()
                        .convertShape(VectorOperators.S2I, INTS, 0)).lanewise(VectorOperators.LSHL, 13).and(SIGN_EXPONENT_MANTISSA)
                        .reinterpretAsFloats().mul(0x1p112f) : ByteVector.fromArray(FLOAT_SCALE_BYTES, c, blockAt + minsAt).reinterpretAsFloats());
                acc0 = acc0.add(m0.mul(am));
                FloatVector m1 = (factored ? ((FloatVector) ByteVector.fromArray(MULTIPLIER_BYTES, c, blockAt + minsAt + oddScales)
                        .convertShape(VectorOperators.B2F, FLOATS, 0)).mul(g1)
                        : halfScales ? ((IntVector) ByteVector.fromArray(HALF_SCALE_BYTES, c, blockAt + minsAt + oddScales).reinterpretAsShorts()
                        .convertShape(VectorOperators.S2I, INTS, 0)).lanewise(VectorOperators.LSHL, 13).and(SIGN_EXPONENT_MANTISSA)
                        .reinterpretAsFloats().mul(0x1p112f) : ByteVector.fromArray(FLOAT_SCALE_BYTES, c, blockAt + minsAt + oddScales).reinterpretAsFloats());
                acc1 = acc1.add(m1.mul(am));
            }
        }
        acc0.intoArray(out, 0);
        acc1.intoArray(out, HALF);
    }

    /**
     * 6-bit codes (q6_k's levels −32..31 stored as level + 32), eight in three 16-bit words per row
     * ({@link #SIX_BIT_WORDS} per block: 6 bits per weight, where bytes take 8): three loads per
     * eight columns, each code a mask or a shift and a mask away (columns 6 and 7 join their low
     * bits to the high pair already in place as 16 × h). The wrapping 16-bit sum of c × a less
     * 32 × Σ a is exact over eight columns (|Σ (c − 32) a| ≤ 8 × 32 × 127 = 32512), so each eight
     * is sign-extended into the 32-bit sums. About 6 vector instructions per column against the
     * small bytes' 4.6, for 6.6 bits read per weight (with the byte scales) against 8.6, and faster
     * than the bytes in the whole model; a nibble plane plus a 2-bit plane needed about 9
     * instructions per column and was slower (docs/kquants.md).
     */
    private void stripSixBits(int s, Activations x, int t, float[] out) {
        byte[] c = codes[s / stripsPerArray];
        int base = (int) ((s % stripsPerArray) * stripBytes);
        int blocks = vectorCols >>> 5;
        int[] q = x.pairs;
        int row = t * cols;
        int eighths = t * (cols >>> 3);
        int as = t * blocksPerRow;
        float[] aScales = x.a.scales();
        FloatVector acc0 = FloatVector.zero(FLOATS);
        FloatVector acc1 = acc0;
        ShortVector six = ShortVector.broadcast(SHORTS, (short) 63);
        ShortVector high = ShortVector.broadcast(SHORTS, (short) 0x30);
        FloatVector f0 = FloatVector.zero(FLOATS);
        FloatVector f1 = f0;
        FloatVector g0 = f0;
        FloatVector g1 = f0;
        for (int b = 0; b < blocks; b++) {
            int blockAt = base + b * blockStride + ((b >>> factorShift) + 1) * factorBytes;
            if (factored && (b & (factorBlocks - 1)) == 0) {
                // A new group: its factors, at its head, for the scales (and minima) of its blocks.
                f0 = ByteVector.fromArray(FLOAT_SCALE_BYTES, c, blockAt - factorBytes).reinterpretAsFloats();
                f1 = ByteVector.fromArray(FLOAT_SCALE_BYTES, c, blockAt - factorBytes + 4 * HALF).reinterpretAsFloats();
                if (hasMins) {
                    g0 = ByteVector.fromArray(FLOAT_SCALE_BYTES, c, blockAt - factorBytes + 4 * ROWS).reinterpretAsFloats();
                    g1 = ByteVector.fromArray(FLOAT_SCALE_BYTES, c, blockAt - factorBytes + 4 * (ROWS + HALF)).reinterpretAsFloats();
                }
            }
            IntVector i0 = IntVector.zero(INTS);
            IntVector i1 = i0;
            int p = blockAt;
            int w = row + b * 32;
            for (int g = 0; g < 4; g++) {
                ShortVector u0 = ByteVector.fromArray(WORD_BYTES, c, p).reinterpretAsShorts();
                ShortVector u1 = ByteVector.fromArray(WORD_BYTES, c, p + 2 * ROWS).reinterpretAsShorts();
                ShortVector u2 = ByteVector.fromArray(WORD_BYTES, c, p + 4 * ROWS).reinterpretAsShorts();
                ShortVector first = u0.and(six).mul(IntVector.broadcast(INTS, q[w]).reinterpretAsShorts())
                        .add(u0.lanewise(VectorOperators.LSHR, 6).and(six).mul(IntVector.broadcast(INTS, q[w + 1]).reinterpretAsShorts()))
                        .add(u1.and(six).mul(IntVector.broadcast(INTS, q[w + 2]).reinterpretAsShorts()))
                        .add(u1.lanewise(VectorOperators.LSHR, 6).and(six).mul(IntVector.broadcast(INTS, q[w + 3]).reinterpretAsShorts()));
                ShortVector second = u2.and(six).mul(IntVector.broadcast(INTS, q[w + 4]).reinterpretAsShorts())
                        .add(u2.lanewise(VectorOperators.LSHR, 6).and(six).mul(IntVector.broadcast(INTS, q[w + 5]).reinterpretAsShorts()))
                        .add(u0.lanewise(VectorOperators.LSHR, 12).add(u2.lanewise(VectorOperators.LSHR, 8).and(high))
                                .mul(IntVector.broadcast(INTS, q[w + 6]).reinterpretAsShorts()))
                        .add(u1.lanewise(VectorOperators.LSHR, 12).add(u2.lanewise(VectorOperators.LSHR, 10).and(high))
                                .mul(IntVector.broadcast(INTS, q[w + 7]).reinterpretAsShorts()));
                IntVector pairs = first.add(second).sub(x.corr8[eighths + 4 * b + g]).reinterpretAsInts();
                i0 = i0.add(pairs.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16));
                i1 = i1.add(pairs.lanewise(VectorOperators.ASHR, 16));
                p += 6 * ROWS;
                w += 8;
                if ((g + 1) * 8 % scaleBlock == 0) {
                    // The end of a scale sub-block: its exact sum times (weight scale × activation scale).
                    int sub = (g + 1) * 8 / scaleBlock - 1;
                    int csum = hasMins ? codeSum(x, t, b * 32 + sub * scaleBlock) : 0;
                    FloatVector d = FloatVector.broadcast(FLOATS, aScales[as + b]);
                    int at = blockAt + blockCodeBytes + sub * subScaleBytes;
                    FloatVector w0 = (factored ? ((FloatVector) ByteVector.fromArray(MULTIPLIER_BYTES, c, at)
                            .convertShape(VectorOperators.B2F, FLOATS, 0)).mul(f0)
                            : halfScales ? ((IntVector) ByteVector.fromArray(HALF_SCALE_BYTES, c, at).reinterpretAsShorts()
                            .convertShape(VectorOperators.S2I, INTS, 0)).lanewise(VectorOperators.LSHL, 13).and(SIGN_EXPONENT_MANTISSA)
                            .reinterpretAsFloats().mul(0x1p112f) : ByteVector.fromArray(FLOAT_SCALE_BYTES, c, at).reinterpretAsFloats());
                    acc0 = acc0.add(((FloatVector) i0.convert(VectorOperators.I2F, 0)).mul(w0.mul(d)));
                    FloatVector w1 = (factored ? ((FloatVector) ByteVector.fromArray(MULTIPLIER_BYTES, c, at + oddScales)
                            .convertShape(VectorOperators.B2F, FLOATS, 0)).mul(f1)
                            : halfScales ? ((IntVector) ByteVector.fromArray(HALF_SCALE_BYTES, c, at + oddScales).reinterpretAsShorts()
                            .convertShape(VectorOperators.S2I, INTS, 0)).lanewise(VectorOperators.LSHL, 13).and(SIGN_EXPONENT_MANTISSA)
                            .reinterpretAsFloats().mul(0x1p112f) : ByteVector.fromArray(FLOAT_SCALE_BYTES, c, at + oddScales).reinterpretAsFloats());
                    acc1 = acc1.add(((FloatVector) i1.convert(VectorOperators.I2F, 0)).mul(w1.mul(d)));
                    if (hasMins) {
                        FloatVector am = FloatVector.broadcast(FLOATS, aScales[as + b] * csum);
                        int m = blockAt + minsAt + sub * subScaleBytes;
                        FloatVector m0 = (factored ? ((FloatVector) ByteVector.fromArray(MULTIPLIER_BYTES, c, m)
                                .convertShape(VectorOperators.B2F, FLOATS, 0)).mul(g0)
                                : halfScales ? ((IntVector) ByteVector.fromArray(HALF_SCALE_BYTES, c, m).reinterpretAsShorts()
                                .convertShape(VectorOperators.S2I, INTS, 0)).lanewise(VectorOperators.LSHL, 13).and(SIGN_EXPONENT_MANTISSA)
                                .reinterpretAsFloats().mul(0x1p112f) : ByteVector.fromArray(FLOAT_SCALE_BYTES, c, m).reinterpretAsFloats());
                        acc0 = acc0.add(m0.mul(am));
                        FloatVector m1 = (factored ? ((FloatVector) ByteVector.fromArray(MULTIPLIER_BYTES, c, m + oddScales)
                                .convertShape(VectorOperators.B2F, FLOATS, 0)).mul(g1)
                                : halfScales ? ((IntVector) ByteVector.fromArray(HALF_SCALE_BYTES, c, m + oddScales).reinterpretAsShorts()
                                .convertShape(VectorOperators.S2I, INTS, 0)).lanewise(VectorOperators.LSHL, 13).and(SIGN_EXPONENT_MANTISSA)
                                .reinterpretAsFloats().mul(0x1p112f) : ByteVector.fromArray(FLOAT_SCALE_BYTES, c, m + oddScales).reinterpretAsFloats());
                        acc1 = acc1.add(m1.mul(am));
                    }
                    i0 = IntVector.zero(INTS);
                    i1 = i0;
                }
            }
        }
        acc0.intoArray(out, 0);
        acc1.intoArray(out, HALF);
    }

    /** Σ activation codes of token t's columns [col, col + scaleBlock) (whole blocks only), from the 16-column chunk sums. */
    private int codeSum(Activations x, int t, int col) {
        int halves = cols / 16;
        int sum = 0;
        for (int k = col / 16; k < (col + scaleBlock) / 16; k++) {
            sum += x.sums16[t * halves + k];
        }
        return sum;
    }

    /** Σ activation codes of token t's block b (whole blocks only), from the 32-column chunk sums. */
    private int blockSum(Activations x, int t, int b) {
        int chunks = cols / 32;
        int sum = 0;
        for (int k = b * (block / 32); k < (b + 1) * (block / 32); k++) {
            sum += x.sums[t * chunks + k];
        }
        return sum;
    }

    /**
     * The partial last block, per lane in scalar code: sum += isum × (weight scale × activation
     * scale), then, with minima, sum += min × (activation scale × Σ codes).
     */
    private void tail(int s, Int8Activations a, int t, float[] out) {
        int tailCols = cols - vectorCols;
        int b = blocksPerRow - 1;
        byte[] q = a.codes();
        float da = a.scales()[t * blocksPerRow + b];
        for (int k = 0; k < tailSubs; k++) {
            int from = k * scaleBlock;
            int to = Math.min(tailCols, from + scaleBlock);
            int csum = 0;
            for (int j = from; j < to; j++) {
                csum += q[t * cols + vectorCols + j];
            }
            for (int lane = 0; lane < ROWS; lane++) {
                int row = s * ROWS + lane;
                int isum = 0;
                for (int j = from; j < to; j++) {
                    isum += tail[row * tailCols + j] * q[t * cols + vectorCols + j];
                }
                int at = (s * ROWS + lane) * tailSubs + k;
                out[lane] += isum * (tailScales[at] * da);
                if (hasMins) {
                    out[lane] += tailMins[at] * (da * csum);
                }
            }
        }
    }
}
