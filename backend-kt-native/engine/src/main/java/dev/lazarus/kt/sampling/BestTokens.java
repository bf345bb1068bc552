package dev.lazarus.kt.sampling;

import java.util.Arrays;

/**
 * The n best tokens of a logit vector, as llama.cpp's top-k sorts them (by logit, highest first), with equal
 * logits ordered by lower token id: a total order, so the result never depends on how the selection runs. Each
 * token is packed into one {@code long} ({@link #pack}); a primitive min-heap of n keeps the best seen, and a
 * token is packed only when its logit could enter it. No boxing: on a 150,000-token vocabulary this is one
 * read of the logits.
 */
final class BestTokens {

    private BestTokens() {}

    /** The {@code n} best tokens, packed, best first (all tokens when n covers the vocabulary). */
    static long[] of(float[] logits, int n) {
        if (n >= logits.length) {
            long[] all = new long[logits.length];
            for (int i = 0; i < all.length; i++) {
                all[i] = pack(logits[i], i);
            }
            return descending(all);
        }
        long[] heap = new long[Math.max(n, 0)];
        if (n <= 0) {
            return heap;
        }
        for (int i = 0; i < n; i++) {
            heap[i] = pack(logits[i], i);
            siftUp(heap, i);
        }
        // the heap's smallest logit: a token below it stays out (a plain float compare, predicted well), and so
        // does one equal to it (a higher id orders lower); zeros (-0 orders below +0) and NaN go the exact way
        float floor = logit(heap[0]);
        for (int i = n; i < logits.length; i++) {
            float v = logits[i];
            if (v < floor || v == floor && v != 0f) {
                continue;
            }
            long p = pack(logits[i], i);
            if (p > heap[0]) {
                replaceMin(heap, n, p);
                floor = logit(heap[0]);
            }
        }
        return descending(heap);
    }

    static int id(long packed) {
        return (int) (0xFFFFFFFFL - (packed & 0xFFFFFFFFL));
    }

    /** Orders by logit, then by lower token id first. */
    static long pack(float logit, int id) {
        int bits = Float.floatToIntBits(logit);
        int ordered = bits ^ ((bits >> 31) & 0x7FFFFFFF); // compares as the floats do: -0 below +0, NaN on top
        return ((long) ordered << 32) | (0xFFFFFFFFL - id);
    }

    private static float logit(long packed) {
        int ordered = (int) (packed >> 32);
        return Float.intBitsToFloat(ordered ^ ((ordered >> 31) & 0x7FFFFFFF));
    }

    private static long[] descending(long[] packed) {
        Arrays.sort(packed);
        for (int i = 0, j = packed.length - 1; i < j; i++, j--) {
            long t = packed[i];
            packed[i] = packed[j];
            packed[j] = t;
        }
        return packed;
    }

    private static void siftUp(long[] heap, int at) {
        long v = heap[at];
        while (at > 0) {
            int parent = (at - 1) >>> 1;
            if (heap[parent] <= v) {
                break;
            }
            heap[at] = heap[parent];
            at = parent;
        }
        heap[at] = v;
    }

    private static void replaceMin(long[] heap, int size, long v) {
        int at = 0;
        while (true) {
            int child = 2 * at + 1;
            if (child >= size) {
                break;
            }
            if (child + 1 < size && heap[child + 1] < heap[child]) {
                child++;
            }
            if (heap[child] >= v) {
                break;
            }
            heap[at] = heap[child];
            at = child;
        }
        heap[at] = v;
    }
}
