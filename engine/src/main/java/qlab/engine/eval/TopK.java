package qlab.engine.eval;

import java.util.PriorityQueue;

/** Indices of the k largest values, largest first (lower index first among equal values). */
final class TopK {

    private TopK() {}

    static int[] indices(float[] v, int offset, int n, int k) {
        // min-heap of the best k seen so far: smallest value (and, on ties, the larger index) at the head
        PriorityQueue<Integer> heap = new PriorityQueue<>(k + 1, (a, b) -> {
            int c = Float.compare(v[offset + a], v[offset + b]);
            return c != 0 ? c : Integer.compare(b, a);
        });
        for (int i = 0; i < n; i++) {
            if (heap.size() < k) {
                heap.add(i);
            } else {
                int head = heap.peek();
                if (v[offset + i] > v[offset + head]) {
                    heap.poll();
                    heap.add(i);
                }
            }
        }
        int[] out = new int[heap.size()];
        for (int i = out.length - 1; i >= 0; i--) {
            out[i] = heap.poll();
        }
        return out;
    }
}
