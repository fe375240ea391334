package qlab.quant.ggml;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * A ggml block type whose fields qlab stores as planes. A qlab row of n blocks is plane 0 for
 * every block, then plane 1 for every block, and so on (e.g. q4_0: n fp16 scales, then n × 16
 * bytes of nibbles); a ggml row is n blocks, each holding its share of every plane, the planes in
 * the order {@link #ggmlOrder} gives (ggml's struct order, e.g. q5_1: d, m, qh, qs). The bytes of
 * each field are the same on both sides, so the conversion only moves them.
 *
 * @param planeBytes bytes of each plane per block, in qlab's plane order; they sum to the type's block size
 * @param ggmlOrder  the qlab planes in the order ggml's block lays them out
 */
public record PlanarBlockCodec(GgmlType type, int[] planeBytes, int[] ggmlOrder) implements GgmlCodec {

    public PlanarBlockCodec {
        planeBytes = planeBytes.clone();
        ggmlOrder = ggmlOrder.clone();
        if (Arrays.stream(planeBytes).sum() != type.typeSize) {
            throw new IllegalArgumentException("planes " + Arrays.toString(planeBytes) + " do not add up to a "
                    + type + " block of " + type.typeSize + " bytes");
        }
        int[] sorted = ggmlOrder.clone();
        Arrays.sort(sorted);
        for (int i = 0; i < sorted.length; i++) {
            if (sorted[i] != i || sorted.length != planeBytes.length) {
                throw new IllegalArgumentException("ggml order " + Arrays.toString(ggmlOrder) + " is not a permutation of the planes");
            }
        }
    }

    /** Planes already in ggml's field order. */
    public static PlanarBlockCodec inOrder(GgmlType type, int... planeBytes) {
        int[] order = new int[planeBytes.length];
        Arrays.setAll(order, i -> i);
        return new PlanarBlockCodec(type, planeBytes, order);
    }

    @Override
    public void toGgml(MemorySegment src, long srcOffset, int cols, MemorySegment dst, long dstOffset) {
        move(src, srcOffset, cols, dst, dstOffset, true);
    }

    @Override
    public void fromGgml(MemorySegment src, long srcOffset, int cols, MemorySegment dst, long dstOffset) {
        move(src, srcOffset, cols, dst, dstOffset, false);
    }

    private void move(MemorySegment src, long srcOffset, int cols, MemorySegment dst, long dstOffset, boolean toGgml) {
        long blocks = type.rowBytes(cols) / type.typeSize;
        for (int field : ggmlOrder) {
            long planeStart = 0;
            long inBlock = 0;
            for (int p = 0; p < planeBytes.length; p++) {
                if (p < field) {
                    planeStart += blocks * planeBytes[p];
                }
            }
            for (int f : ggmlOrder) {
                if (f == field) {
                    break;
                }
                inBlock += planeBytes[f];
            }
            int n = planeBytes[field];
            for (long b = 0; b < blocks; b++) {
                long qlab = planeStart + b * n;
                long ggml = b * type.typeSize + inBlock;
                if (toGgml) {
                    MemorySegment.copy(src, srcOffset + qlab, dst, dstOffset + ggml, n);
                } else {
                    MemorySegment.copy(src, srcOffset + ggml, dst, dstOffset + qlab, n);
                }
            }
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof PlanarBlockCodec c && c.type == type && Arrays.equals(c.planeBytes, planeBytes)
                && Arrays.equals(c.ggmlOrder, ggmlOrder);
    }

    @Override
    public int hashCode() {
        return type.hashCode() * 31 + Arrays.hashCode(planeBytes) * 17 + Arrays.hashCode(ggmlOrder);
    }

    @Override
    public String toString() {
        return "PlanarBlockCodec[" + type + ", planes " + Arrays.toString(planeBytes) + ", ggml order "
                + Arrays.toString(ggmlOrder) + "]";
    }
}
