package dev.lazarus.kt.tokenizer;

import java.util.Arrays;

/** A growable {@code int} array: token ids and chunk lengths without boxing. */
final class IntList {

    private int[] values;
    private int size;

    IntList(int capacity) {
        values = new int[Math.max(4, capacity)];
    }

    static IntList of(int value) {
        IntList list = new IntList(4);
        list.add(value);
        return list;
    }

    void add(int value) {
        if (size == values.length) {
            values = Arrays.copyOf(values, size * 2);
        }
        values[size++] = value;
    }

    int get(int index) {
        return values[index];
    }

    int size() {
        return size;
    }

    int[] toArray() {
        return Arrays.copyOf(values, size);
    }
}
