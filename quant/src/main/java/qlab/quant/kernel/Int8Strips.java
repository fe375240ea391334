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
 * pair is widened into 32-bit sums. Per block the integer sum is exact, so each row's result is
 * sum += isum × (weight scale × activation scale) over the blocks in order — bit for bit
 * {@link qlab.quant.PackedWeights#dotInt8Scalar}. The last, partial block (width not a multiple
 * of the block) is done by scalar code on stored levels, in the same order.
 *
 * <p>The 32-column loop is written out in each kernel: as a helper returning the chunk's sum it
 * was fast only when C2 happened to inline it; in a run where prefill took another path it did
 * not, the returned vectors were boxed and q4_0 decoded at 9 tok/s instead of ~40. It keeps two
 * 16-bit sums, the even and the odd columns, added once per chunk: the same wrapping sum, so the
 * same bits, with the add chain halved. Against one sum, three alternating pairs each: {@code
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
 * <p>Every layout but q4_0's (nibbles, no minima, bias or factors: {@link #stripNibbles32})
 * runs an integer kernel that leaves each scale sub-block's 32-bit sums in a small array, then
 * {@link #fold} for the float steps. In one method, C2 reached its inlining node budget in the
 * wider loops and left the scale loads as calls returning boxed vectors: per 3072×1024 product
 * (MatVecBenchmark, hot, one thread, {@code -prof gc}) q5_0 allocated 605 KB, q4_k 2.4 MB,
 * q4_0 6 KB; split, q5_0 and q5_1 allocate what q4_0 does, and q5_0 ran 12.1k products/s
 * against 9.4k (q4_0 16.3k). The k-quants' sub-block scales d × sc (and minima dmin × m) are
 * stored as signed byte multipliers with one f32 factor per row and 256 values ({@link
 * Factors}): 1 byte per sub-block and row instead of 4, the same f32 products, so the same bits.
 * q6_k's levels are 6-bit codes, eight to three 16-bit words (6 bits per weight, as stored,
 * against 8 as bytes); 5-bit codes stay three to a word: as bytes summed eight columns at a time
 * they ran 7.6k against 8.2k products/s for q5_0 and 4.0k against 4.8k for q5_k (hot, one
 * thread, 2026-12-01, the loaded 2-vCPU AMD EPYC).
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
    /** The bytes of half a strip's scale multipliers ({@link Factors}). */
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
     * 16-bit words per row and 32-value block of 6-bit codes: per 8 columns c0..c7 three words,
     * c0 | c1 << 6 | (c6 & 15) << 12, c2 | c3 << 6 | (c7 & 15) << 12 and c4 | c5 << 6 | (c6 >> 4) << 12 | (c7 >> 4) << 14.
     */
    static final int SIX_BIT_WORDS = 12;
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
    /** Whether the levels are 5-bit codes, three to a 16-bit word ({@link #fiveBitSums}). */
    private final boolean fiveBits;
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
    /** Whether the strips run {@link #stripNibbles32} (q4_0's layout: nibbles, blocks of 32, no minima, bias or factors). */
    private final boolean fusedNibbles;
    /** Whether the levels are 6-bit codes, eight to three 16-bit words ({@link #sixBitSums}). */
    private final boolean sixBits;
    /**
     * Whether the whole blocks' scales (and minima) are stored as signed byte multipliers of a
     * factor per group of {@link #factorBlocks} blocks ({@link Factors}), the factors at the head of
     * their group: the k-quants' d × sc in 1 byte per sub-block and row, not 4.
     */
    private final boolean factored;
    /** Blocks per factor group (a power of two; 1 without factors). */
    private final int factorBlocks;
    private final int factorShift;
    /** Bytes of a group's head: the {@link #ROWS} scale factors, then the minima's; 0 without factors. */
    private final int factorBytes;
    /** Offset of the second half's factors after the first half's, and of the minima's factors after the scales'. */
    private final int oddFactors;
    private final int minFactorsAt;

    /**
     * Repacks the first {@code strips × ROWS} rows.
     *
     * @param bits   the code width (8: byte levels; 6 and 5: codes level + 32 or + 16 packed in 16-bit
     *               words, blocks of 32 only; 1, 2 or 4: levels in [−8, 7], stored as nibbles)
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
     * As above, with the sub-block scales (and minima) given as integers times a factor per group
     * of sub-blocks ({@link Factors}); where they are not, the strips keep the scales as floats.
     */
    public Int8Strips(int strips, int cols, int block, int scaleBlock, int scalesPerRow, int bits, int levelBias,
                      Levels levels, float[] scales, float[] mins, Factors factors) {
        this(strips, cols, block, scaleBlock, scalesPerRow, bits, levelBias, levels, scales, mins, factors, MAX_ARRAY_BYTES);
    }

    /** As above, with the strips in arrays of at most {@code maxArrayBytes} (whole strips; tests use small ones). */
    Int8Strips(int strips, int cols, int block, int bits, Levels levels, float[] scales, long maxArrayBytes) {
        this(strips, cols, block, block, (cols + block - 1) / block, bits, 0, levels, scales, null, null, maxArrayBytes);
    }

    /**
     * The factors of a format whose sub-block scales are small integers times one float per group
     * of sub-blocks (the k-quants: scale = d × sc, min = dmin × m, d and dmin per 256 values):
     * per row and group, the factor of the scales and, for a format with minima, of the minima
     * (as passed: the negated dmin where the minima are negated). The strips find each multiplier
     * (a signed byte) and keep it only if factor × multiplier is bitwise the scale in f32, so
     * the product is unchanged; one that is not makes them keep every scale as a float.
     *
     * @param subBlocksPerFactor scale sub-blocks per group (a power of two: 8 for q4_k's 32-value
     *                           sub-blocks of 256, 16 for q6_k's 16-value ones)
     * @param scaleFactors       [rows, scalesPerRow / subBlocksPerFactor]
     * @param minFactors         laid out as {@code scaleFactors}; null without minima
     */
    public record Factors(int subBlocksPerFactor, float[] scaleFactors, float[] minFactors) {
    }

    Int8Strips(int strips, int cols, int block, int scaleBlock, int scalesPerRow, int bits, int levelBias,
               Levels levels, float[] scales, float[] mins, Factors factors, long maxArrayBytes) {
        if (block < 32 || Integer.bitCount(block) != 1) {
            throw new IllegalArgumentException("block must be a power of two >= 32, got " + block);
        }
        if (scaleBlock < 16 || Integer.bitCount(scaleBlock) != 1 || scaleBlock > block) {
            throw new IllegalArgumentException("scale block must be a power of two in [16, " + block + "], got " + scaleBlock);
        }
        if (bits < 6 && scaleBlock != block || (bits == 5 || bits == 6) && block != 32) {
            throw new IllegalArgumentException(bits + "-bit levels need one scale per block of 32 (5 bits) or any block (4 bits)");
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
        byte[] scaleMultipliers = null;
        byte[] minMultipliers = null;
        if (factors != null) {
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
        int groupBlocks = factors == null ? 1 : factors.subBlocksPerFactor() * scaleBlock / block;
        this.factorBlocks = factored ? groupBlocks : 1;
        this.factorShift = Integer.numberOfTrailingZeros(factorBlocks);
        int wholeBlocks = vectorCols / block;
        int groups = (wholeBlocks + factorBlocks - 1) / factorBlocks;
        int factorsPerRow = factors == null ? 0 : (scalesPerRow + factors.subBlocksPerFactor() - 1) / factors.subBlocksPerFactor();
        int factorScaleBytes = 4;
        this.oddFactors = HALF * factorScaleBytes;
        this.minFactorsAt = ROWS * factorScaleBytes;
        this.factorBytes = factored ? ROWS * factorScaleBytes * (hasMins ? 2 : 1) : 0;
        this.halfScales = !factored && halfScales(rows, scalesPerRow, wholeScales, scales)
                && (mins == null || halfScales(rows, scalesPerRow, wholeScales, mins));
        int scaleBytes = factored ? 1 : halfScales ? 2 : 4;
        this.blockCodeBytes = ROWS * (nibbles ? block / 2 : fiveBits ? 2 * FIVE_BIT_WORDS : sixBits ? 2 * SIX_BIT_WORDS : block);
        this.subScaleBytes = ROWS * scaleBytes;
        this.minsAt = blockCodeBytes + subs * subScaleBytes;
        this.blockStride = blockCodeBytes + subs * subScaleBytes * (hasMins ? 2 : 1);
        this.oddScales = HALF * scaleBytes;
        this.stripBytes = (long) blockStride * wholeBlocks + (long) factorBytes * groups;
        this.fusedNibbles = nibbles && block == 32 && !factored && !hasMins && levelBias == 0;
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
        java.util.stream.IntStream.range(0, strips).parallel()
                .forEach(s -> pack(s, levels, scales, mins, sm, mm, factors, factorsPerRow));
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
                int want = Float.floatToRawIntBits(values[r * perRow + k]);
                int first = f != 0 && Float.isFinite(f) ? Math.round(values[r * perRow + k] / f) : 0;
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

    /** Where block b of a strip starts, from the strip's start: after the blocks before it and their groups' factors. */
    private int blockAt(int b) {
        return b * blockStride + ((b >>> factorShift) + 1) * factorBytes;
    }

    private void pack(int s, Levels levels, float[] rowScales, float[] rowMins, byte[] scaleMultipliers,
                      byte[] minMultipliers, Factors factors, int factorsPerRow) {
        int tailCols = cols - vectorCols;
        byte[] strip = new byte[(int) stripBytes];
        float[] rowLevels = new float[cols];
        int wholeBlocks = vectorCols / block;
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
                    putWordBits(strip, blockAt + word * 2 * ROWS + 2 * lane, stored << shift);
                } else if (sixBits) {
                    int stored = level - levelBias + 32;
                    if (stored < 0 || stored > 63) {
                        throw new IllegalArgumentException("level " + level + " does not fit a 6-bit code");
                    }
                    int m = inBlock & 7;
                    // word (m < 6 ? m / 2 : m - 6) of the group: c0..c5 at bits 6 × (m % 2), c6 and c7's low four bits at 12
                    int word = m < 6 ? m >>> 1 : m - 6;
                    int v = m < 6 ? stored << 6 * (m & 1) : (stored & 15) << 12;
                    putWordBits(strip, blockAt + ((inBlock >>> 3) * 3 + word) * 2 * ROWS + 2 * lane, v);
                    if (m >= 6) {
                        putWordBits(strip, blockAt + ((inBlock >>> 3) * 3 + 2) * 2 * ROWS + 2 * lane, (stored >>> 4) << 2 * m);
                    }
                } else {
                    strip[blockAt + inBlock * ROWS + lane] = (byte) (level - levelBias);
                }
            }
            int scaleBytes = factored ? 1 : halfScales ? 2 : 4;
            for (int b = 0; b < wholeBlocks; b++) {
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
            if (factored) {
                int factorScaleBytes = 4;
                for (int g = 0; g * factorBlocks < wholeBlocks; g++) {
                    int at = blockAt(g * factorBlocks) - factorBytes + r * factorScaleBytes;
                    putScale(strip, at, factors.scaleFactors()[row * factorsPerRow + g], false);
                    if (hasMins) {
                        putScale(strip, at + minFactorsAt, factors.minFactors()[row * factorsPerRow + g], false);
                    }
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
    }

    /** ORs bits into the native-order 16-bit word at strip[at]. */
    private static void putWordBits(byte[] strip, int at, int bits) {
        int lo = NATIVE_LITTLE ? at : at + 1;
        int hi = NATIVE_LITTLE ? at + 1 : at;
        int v = (strip[lo] & 0xFF | (strip[hi] & 0xFF) << 8) | bits;
        strip[lo] = (byte) v;
        strip[hi] = (byte) (v >>> 8);
    }

    /** One row's scale, minimum or factor at strip[at]: fp16 or f32, in native byte order (the kernels reinterpret it). */
    private static void putScale(byte[] strip, int at, float scale, boolean half) {
        int bits = half ? Float.floatToFloat16(scale) : Float.floatToRawIntBits(scale);
        for (int k = 0; k < (half ? 2 : 4); k++) {
            strip[at + k] = (byte) (bits >>> 8 * (NATIVE_LITTLE ? k : (half ? 1 : 3) - k));
        }
    }

    /**
     * Half a strip's floats (rows 0 .. HALF or HALF .. ROWS: weight scales, minima or factors)
     * from byte offset {@code at}: fp16 widened exactly (sign, then exponent and mantissa shifted
     * into place as a float 2^−112 too small, times 2^112: subnormal halves come out as the right
     * normal floats), or f32 as stored.
     */
    private static FloatVector floats(byte[] c, int at, boolean half) {
        if (half) {
            IntVector h = (IntVector) ByteVector.fromArray(HALF_SCALE_BYTES, c, at).reinterpretAsShorts()
                    .convertShape(VectorOperators.S2I, INTS, 0);
            return h.and(0x8000_0000).or(h.and(0x7FFF).lanewise(VectorOperators.LSHL, 13))
                    .reinterpretAsFloats().mul(0x1p112f);
        }
        return ByteVector.fromArray(FLOAT_SCALE_BYTES, c, at).reinterpretAsFloats();
    }

    /**
     * Half a strip's weight scales (or minima) of one sub-block, from byte offset {@code at}: as
     * stored, or, {@link #factored}, each row's multiplier byte times its group's factor (the
     * product the format's scale is, so the same bits).
     */
    private FloatVector scales(byte[] c, int at, FloatVector factor) {
        if (factored) {
            return ((FloatVector) ByteVector.fromArray(MULTIPLIER_BYTES, c, at).castShape(FLOATS, 0)).mul(factor);
        }
        return floats(c, at, halfScales);
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
        /** Each code as a 16-bit value twice over, so one 32-bit broadcast load fills the short lanes with it. */
        final int[] pairs;   // [tokens][cols]
        /** 32 × each 8-column chunk's code sum (the 6-bit codes' correction), made by the first kernel that needs it. */
        private volatile short[] corr8; // [tokens][cols / 8]

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
            }
        }

        public Int8Activations codes() {
            return a;
        }

        /** {@link #corr8}, made once (threads that race make the same values). */
        short[] corr8() {
            short[] c = corr8;
            if (c == null) {
                int cols = a.cols();
                int eighths = cols / 8;
                byte[] q = a.codes();
                c = new short[a.tokens() * eighths];
                for (int t = 0; t < a.tokens(); t++) {
                    for (int e = 0; e < eighths; e++) {
                        int sum = 0;
                        for (int j = t * cols + 8 * e; j < t * cols + 8 * e + 8; j++) {
                            sum += q[j];
                        }
                        c[t * eighths + e] = (short) (32 * sum);
                    }
                }
                corr8 = c;
            }
            return c;
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
        int[] sums = new int[Math.max(1, vectorCols / scaleBlock) * ROWS];
        int group = stripsPerPass();
        int stripStart = rowStart / ROWS;
        int stripEnd = (rowEnd + ROWS - 1) / ROWS;
        for (int first = stripStart; first < stripEnd; first += group) {
            int last = Math.min(stripEnd, first + group);
            for (int t = 0; t < a.tokens(); t++) {
                for (int s = first; s < last; s++) {
                    if (fusedNibbles) {
                        stripNibbles32(s, x, t, out);
                    } else {
                        if (nibbles) {
                            nibbleSums(s, x, t, sums);
                        } else if (fiveBits) {
                            fiveBitSums(s, x, t, sums);
                        } else if (sixBits) {
                            sixBitSums(s, x, t, sums);
                        } else {
                            byteSums(s, x, t, sums);
                        }
                        fold(s, x, t, sums, out);
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

    /**
     * q4_0's kernel (nibbles in 32-value blocks, no minima, no level bias, scales as stored): the
     * integer sums and the float steps in one loop.
     */
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
        for (int b = 0; b < blocks; b++) {
            int blockAt = base + b * blockStride;
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
            acc0 = acc0.add(((FloatVector) even.convert(VectorOperators.I2F, 0)).mul(floats(c, at, halfScales).mul(d)));
            acc1 = acc1.add(((FloatVector) odd.convert(VectorOperators.I2F, 0)).mul(floats(c, at + oddScales, halfScales).mul(d)));
            if (hasMins) {
                FloatVector am = FloatVector.broadcast(FLOATS, aScales[as + b] * csum);
                acc0 = acc0.add(floats(c, blockAt + minsAt, halfScales).mul(am));
                acc1 = acc1.add(floats(c, blockAt + minsAt + oddScales, halfScales).mul(am));
            }
        }
        acc0.intoArray(out, 0);
        acc1.intoArray(out, HALF);
    }


    /**
     * The float steps of every other layout, after its integer kernel has left each scale
     * sub-block's exact 32-bit sums in {@code sums} ([sub-block][rows 0 .. HALF, then HALF .. ROWS]):
     * per sub-block in order, sum += isum × (weight scale × activation scale), then with minima
     * sum += min × (activation scale × Σ code). Apart because C2 stops inlining when a method
     * grows past its node budget: in one method with the wider integer loops, the scale loads were
     * left as calls returning boxed vectors (q5_0 allocated 600 KB per 3072×1024 product, q4_k 2.4
     * MB, q4_0's fused kernel 6 KB) and ran at a third of q4_0's speed.
     */
    private void fold(int s, Activations x, int t, int[] sums, float[] out) {
        byte[] c = codes[s / stripsPerArray];
        int base = (int) ((s % stripsPerArray) * stripBytes);
        int as = t * blocksPerRow;
        float[] aScales = x.a.scales();
        // One half of the strip's rows at a time: half the code for C2 to inline, the same float operations per row.
        for (int h = 0; h < 2; h++) {
            FloatVector acc = FloatVector.zero(FLOATS);
            FloatVector f = acc;
            FloatVector g = acc;
            for (int b = 0; b < vectorCols / block; b++) {
                int blockAt = base + blockAt(b);
                if (factored && (b & factorBlocks - 1) == 0) {
                    int head = blockAt - factorBytes + h * oddFactors;
                    f = ByteVector.fromArray(FLOAT_SCALE_BYTES, c, head).reinterpretAsFloats();
                    if (hasMins) {
                        g = ByteVector.fromArray(FLOAT_SCALE_BYTES, c, head + minFactorsAt).reinterpretAsFloats();
                    }
                }
                for (int sub = 0; sub < subs; sub++) {
                    IntVector i = IntVector.fromArray(INTS, sums, (b * subs + sub) * ROWS + h * HALF);
                    int csum = levelBias != 0 || hasMins ? codeSum(x, t, b * block + sub * scaleBlock) : 0;
                    if (levelBias != 0) {
                        i = i.add(levelBias * csum);
                    }
                    int at = blockAt + blockCodeBytes + sub * subScaleBytes + h * oddScales;
                    acc = acc.add(((FloatVector) i.convert(VectorOperators.I2F, 0))
                            .mul(scales(c, at, f).mul(aScales[as + b])));
                    if (hasMins) {
                        acc = acc.add(scales(c, at - blockCodeBytes + minsAt, g).mul(aScales[as + b] * csum));
                    }
                }
            }
            acc.intoArray(out, h * HALF);
        }
    }

    /**
     * Nibble levels (any block of 32 or more): per 32 columns the wrapping 16-bit sums of
     * (level + 8) × code, even and odd columns apart, less 8 × Σ code, widened into the block's
     * 32-bit sums.
     */
    private void nibbleSums(int s, Activations x, int t, int[] sums) {
        byte[] c = codes[s / stripsPerArray];
        int base = (int) ((s % stripsPerArray) * stripBytes);
        int chunksPerBlock = block >>> 5;
        int[] q = x.pairs;
        int row = t * cols;
        int corr = t * (cols >>> 5);
        ShortVector low = ShortVector.broadcast(SHORTS, (short) 0x0F);
        for (int b = 0; b < vectorCols / block; b++) {
            IntVector i0 = IntVector.zero(INTS);
            IntVector i1 = i0;
            int p = base + blockAt(b);
            for (int k0 = b * chunksPerBlock; k0 < (b + 1) * chunksPerBlock; k0++) {
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
                IntVector pairs = evenCols.add(oddCols).sub(x.corr[corr + k0]).reinterpretAsInts();
                i0 = i0.add(pairs.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16));
                i1 = i1.add(pairs.lanewise(VectorOperators.ASHR, 16));
            }
            i0.intoArray(sums, b * ROWS);
            i1.intoArray(sums, b * ROWS + HALF);
        }
    }

    /**
     * 8-bit levels: each column pair's two products summed in 16 bits, then sign-extended into the
     * even and odd lanes' 32-bit sums, stored at the end of each scale sub-block. Biasing the pair
     * sums by 2^15 into unsigned halves saves one of those five operations per pair (sum the int
     * view and its upper halves; the lower sums are the difference) and gives the same bits, but
     * measured no faster: MatVecBenchmark q8_0 4864×896 hot, one thread, 9.2/12.0/11.5 vs
     * 10.7/11.7/10.7 G multiply-adds/s; whole-model q8_0 decode at two threads, five alternating
     * pairs: -18%, -15%, +10%, -2%, -7% for the biased variant. Not kept.
     */
    private void byteSums(int s, Activations x, int t, int[] sums) {
        byte[] c = codes[s / stripsPerArray];
        int base = (int) ((s % stripsPerArray) * stripBytes);
        int[] q = x.pairs;
        int row = t * cols;
        for (int b = 0; b < vectorCols / block; b++) {
            IntVector i0 = IntVector.zero(INTS);
            IntVector i1 = i0;
            int p = base + blockAt(b);
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
                    int at = (b * block + k + 2 - scaleBlock) / scaleBlock * ROWS;
                    i0.intoArray(sums, at);
                    i1.intoArray(sums, at + HALF);
                    i0 = IntVector.zero(INTS);
                    i1 = i0;
                }
            }
        }
    }

    /**
     * 6-bit levels (q6_k), stored as codes c = level − levelBias + 32 in 0..63, eight to three
     * 16-bit words ({@link #SIX_BIT_WORDS} per row and block: 6 bits per weight, as the format
     * stores them). Per 8 columns three loads and fifteen shifts and masks (the two codes split
     * over words joined by an or), then per column a broadcast, a multiply and an add. The
     * wrapping 16-bit sum of c × a less 32 × Σ a over 8 columns is exact (|Σ (c − 32) a| ≤ 32 ×
     * 127 × 8 = 32512), then sign-extended into the 32-bit sums.
     */
    private void sixBitSums(int s, Activations x, int t, int[] sums) {
        byte[] c = codes[s / stripsPerArray];
        int base = (int) ((s % stripsPerArray) * stripBytes);
        int[] q = x.pairs;
        short[] corr8 = x.corr8();
        int row = t * cols;
        int eighths = t * (cols >>> 3);
        ShortVector low6 = ShortVector.broadcast(SHORTS, (short) 0x3F);
        ShortVector bits45 = ShortVector.broadcast(SHORTS, (short) 0x30);
        IntVector i0 = IntVector.zero(INTS);
        IntVector i1 = i0;
        int p = base;
        for (int j = 0; j < vectorCols; j += 8) {
            if ((j & block - 1) == 0) {
                p = base + blockAt(j / block);
            }
            int w = row + j;
            ShortVector u = ByteVector.fromArray(WORD_BYTES, c, p).reinterpretAsShorts();
            ShortVector v = ByteVector.fromArray(WORD_BYTES, c, p + 2 * ROWS).reinterpretAsShorts();
            ShortVector z = ByteVector.fromArray(WORD_BYTES, c, p + 4 * ROWS).reinterpretAsShorts();
            ShortVector c6 = u.lanewise(VectorOperators.LSHR, 12).or(z.lanewise(VectorOperators.LSHR, 8).and(bits45));
            ShortVector c7 = v.lanewise(VectorOperators.LSHR, 12).or(z.lanewise(VectorOperators.LSHR, 10).and(bits45));
            ShortVector evenCols = u.and(low6).mul(IntVector.broadcast(INTS, q[w]).reinterpretAsShorts())
                    .add(v.and(low6).mul(IntVector.broadcast(INTS, q[w + 2]).reinterpretAsShorts()))
                    .add(z.and(low6).mul(IntVector.broadcast(INTS, q[w + 4]).reinterpretAsShorts()))
                    .add(c6.mul(IntVector.broadcast(INTS, q[w + 6]).reinterpretAsShorts()));
            ShortVector oddCols = u.lanewise(VectorOperators.LSHR, 6).and(low6).mul(IntVector.broadcast(INTS, q[w + 1]).reinterpretAsShorts())
                    .add(v.lanewise(VectorOperators.LSHR, 6).and(low6).mul(IntVector.broadcast(INTS, q[w + 3]).reinterpretAsShorts()))
                    .add(z.lanewise(VectorOperators.LSHR, 6).and(low6).mul(IntVector.broadcast(INTS, q[w + 5]).reinterpretAsShorts()))
                    .add(c7.mul(IntVector.broadcast(INTS, q[w + 7]).reinterpretAsShorts()));
            IntVector pairs = evenCols.add(oddCols).sub(corr8[eighths + (j >>> 3)]).reinterpretAsInts();
            i0 = i0.add(pairs.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16));
            i1 = i1.add(pairs.lanewise(VectorOperators.ASHR, 16));
            p += 6 * ROWS;
            if ((j + 8 & scaleBlock - 1) == 0) {
                int at = (j + 8 - scaleBlock) / scaleBlock * ROWS;
                i0.intoArray(sums, at);
                i1.intoArray(sums, at + HALF);
                i0 = IntVector.zero(INTS);
                i1 = i0;
            }
        }
    }

    /**
     * 5-bit levels (q5_0, q5_1, q5_k), stored as codes c = level − levelBias + 16 in 0..31, three
     * to a 16-bit word ({@link #FIVE_BIT_WORDS} words per row and block: 5.5 bits per weight, as
     * the formats store them), so a load gives each row's word in its lane and a shift and a mask
     * give a code, with no widening. Per 16 columns the wrapping 16-bit sum of c × a less
     * 16 × Σ a is exact (|Σ (c − 16) a| ≤ 16 × 127 × 16 = 32512; 17 columns could overflow): so
     * two sums per block, columns 0..15 and 16..31, each sign-extended into the 32-bit sums. One
     * loop serves both halves, so that the method stays within C2's inlining budget.
     */
    private void fiveBitSums(int s, Activations x, int t, int[] sums) {
        byte[] c = codes[s / stripsPerArray];
        int base = (int) ((s % stripsPerArray) * stripBytes);
        int[] q = x.pairs;
        int row = t * cols;
        int halves = t * (cols >>> 4);
        ShortVector mask = ShortVector.broadcast(SHORTS, (short) 31);
        for (int b = 0; b < vectorCols >>> 5; b++) {
            int blockAt = base + blockAt(b);
            IntVector i0 = IntVector.zero(INTS);
            IntVector i1 = i0;
            for (int h = 0; h < 2; h++) {
                int p = blockAt + h * 10 * ROWS;
                int w = row + b * 32 + h * 16;
                ShortVector sum = ShortVector.zero(SHORTS);
                for (int k = 0; k < 5; k++) {
                    ShortVector u = ByteVector.fromArray(WORD_BYTES, c, p).reinterpretAsShorts();
                    sum = sum.add(u.and(mask).mul(IntVector.broadcast(INTS, q[w]).reinterpretAsShorts())
                            .add(u.lanewise(VectorOperators.LSHR, 5).and(mask).mul(IntVector.broadcast(INTS, q[w + 1]).reinterpretAsShorts()))
                            .add(u.lanewise(VectorOperators.LSHR, 10).mul(IntVector.broadcast(INTS, q[w + 2]).reinterpretAsShorts())));
                    p += 2 * ROWS;
                    w += 3;
                }
                // Column 15 (or 31) sits in bits 0-4 (or 5-9) of the last word.
                ShortVector last = ByteVector.fromArray(WORD_BYTES, c, blockAt + 20 * ROWS).reinterpretAsShorts()
                        .lanewise(VectorOperators.LSHR, 5 * h).and(mask);
                IntVector pairs = sum.add(last.mul(IntVector.broadcast(INTS, q[w]).reinterpretAsShorts()))
                        .sub(x.corr16[halves + 2 * b + h]).reinterpretAsInts();
                i0 = i0.add(pairs.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16));
                i1 = i1.add(pairs.lanewise(VectorOperators.ASHR, 16));
            }
            i0.intoArray(sums, b * ROWS);
            i1.intoArray(sums, b * ROWS + HALF);
        }
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
