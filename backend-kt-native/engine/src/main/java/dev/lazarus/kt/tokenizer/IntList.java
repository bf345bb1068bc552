package dev.lazarus.kt.tokenizer;

import java.util.Arrays;

/** A growable {@code int} array: token ids, chunk lengths and generated tokens without boxing. */
public final class IntList {

    private int[] values;
    private int size;

    public IntList() {
        this(64);
    }

    public IntList(int capacity) {
        values = new int[Math.max(4, capacity)];
    }

    static IntList of(int value) {
        IntList list = new IntList(4);
        list.add(value);
        return list;
    }

    public void add(int value) {
        if (size == values.length) {
            values = Arrays.copyOf(values, size * 2);
        }
        values[size++] = value;
    }

    public int get(int index) {
        if (index >= size) {
            throw new IndexOutOfBoundsException(index);
        }
        return values[index];
    }

    public void set(int index, int value) {
        if (index >= size) {
            throw new IndexOutOfBoundsException(index);
        }
        values[index] = value;
    }

    public int size() {
        return size;
    }

    public int[] toArray() {
        return Arrays.copyOf(values, size);
    }
}
