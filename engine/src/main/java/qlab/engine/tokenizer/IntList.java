package qlab.engine.tokenizer;

import java.util.Arrays;

/** A growable int array, so that encoding does not box ids. */
final class IntList {
    private int[] items;
    private int size;

    IntList(int capacity) {
        items = new int[Math.max(8, capacity)];
    }

    void add(int v) {
        if (size == items.length) {
            items = Arrays.copyOf(items, size * 2);
        }
        items[size++] = v;
    }

    void addAll(int[] values) {
        if (size + values.length > items.length) {
            items = Arrays.copyOf(items, Math.max(items.length * 2, size + values.length));
        }
        System.arraycopy(values, 0, items, size, values.length);
        size += values.length;
    }

    int[] toArray() {
        return Arrays.copyOf(items, size);
    }
}
