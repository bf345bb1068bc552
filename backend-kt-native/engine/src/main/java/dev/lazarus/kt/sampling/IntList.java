package dev.lazarus.kt.sampling;

import java.util.Arrays;

/** The tokens generated so far, without boxing; the sampler reads it for penalties. */
public final class IntList {

    private int[] values = new int[64];
    private int size;

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

    public int size() {
        return size;
    }

    public int[] toArray() {
        return Arrays.copyOf(values, size);
    }
}
