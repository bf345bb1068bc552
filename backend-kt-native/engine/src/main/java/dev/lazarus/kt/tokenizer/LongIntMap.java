package dev.lazarus.kt.tokenizer;

import java.util.Arrays;

/** Open-addressing {@code long → int} map: merge ranks looked up in the BPE loop without boxing. */
final class LongIntMap {

    private static final long EMPTY = Long.MIN_VALUE;

    private long[] keys;
    private int[] values;
    private int size;

    LongIntMap(int expected) {
        int capacity = Integer.highestOneBit(Math.max(16, expected * 2 - 1)) << 1;
        keys = new long[capacity];
        values = new int[capacity];
        Arrays.fill(keys, EMPTY);
    }

    /** Stores the value unless the key is present already (the first merge of a pair wins, as in llama.cpp). */
    void putIfAbsent(long key, int value) {
        if ((size + 1) * 2 > keys.length) {
            grow();
        }
        int slot = slot(key);
        if (keys[slot] == EMPTY) {
            keys[slot] = key;
            values[slot] = value;
            size++;
        }
    }

    int get(long key, int missing) {
        int slot = slot(key);
        return keys[slot] == EMPTY ? missing : values[slot];
    }

    private int slot(long key) {
        int mask = keys.length - 1;
        int slot = (int) (mix(key) & mask);
        while (keys[slot] != EMPTY && keys[slot] != key) {
            slot = (slot + 1) & mask;
        }
        return slot;
    }

    private static long mix(long key) {
        long h = key * 0x9E3779B97F4A7C15L;
        return h ^ (h >>> 32);
    }

    private void grow() {
        long[] oldKeys = keys;
        int[] oldValues = values;
        keys = new long[oldKeys.length * 2];
        values = new int[oldKeys.length * 2];
        Arrays.fill(keys, EMPTY);
        size = 0;
        for (int i = 0; i < oldKeys.length; i++) {
            if (oldKeys[i] != EMPTY) {
                putIfAbsent(oldKeys[i], oldValues[i]);
            }
        }
    }
}
