package dev.lazarus.kt.gpu;

import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import dev.lazarus.kt.model.KvCache;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * Device copies (F16) of the sequences' KV caches for the GPU layer path. The host {@link KvCache} stays the
 * reference: the layer path writes every computed position back to it, so a device copy can always be
 * rebuilt from it. A copy is made on a sequence's first GPU pass (uploading what the host holds, e.g. a
 * reused prefix), grown by re-allocating and re-uploading, and dropped when its cache is garbage or when
 * more than {@code maxCopies} sequences hold one (least recently used first).
 */
final class DeviceKvCaches implements AutoCloseable {

    /** One sequence's device cache: per block keys then values, {@code capacity} positions each. */
    final class Copy {
        private final WeakReference<KvCache> owner;
        final long base;
        final int capacity;
        int valid;
        long lastUse;

        Copy(KvCache owner, int capacity) {
            this.owner = new WeakReference<>(owner);
            this.capacity = capacity;
            this.base = cu.malloc(2L * capacity * blocks * kvWidth);
        }

        long keys(int block) {
            return base + 2L * capacity * block * kvWidth;
        }

        long values(int block) {
            return keys(block) + 2L * capacity * keyWidth;
        }
    }

    private final CudaDriver cu;
    private final MemorySegment stream;
    private final int blocks;
    private final int keyWidth;
    private final int valueWidth;
    private final int kvWidth;
    private final int maxCopies;
    private final List<Copy> copies = new ArrayList<>();
    private long uses;

    DeviceKvCaches(CudaDriver cu, MemorySegment stream, int blocks, int keyWidth, int valueWidth, int maxCopies) {
        this.cu = cu;
        this.stream = stream;
        this.blocks = blocks;
        this.keyWidth = keyWidth;
        this.valueWidth = valueWidth;
        this.kvWidth = keyWidth + valueWidth;
        this.maxCopies = maxCopies;
    }

    /**
     * The device copy of {@code cache} ready for a pass at {@code position}: positions before it hold what
     * the host cache holds. Enqueued on the stream (the upload, if any, completes before later work).
     */
    Copy prepare(KvCache cache, int position) {
        return prepare(cache, position, 1);
    }

    /** {@link #prepare} for a pass over {@code count} positions from {@code position} on (a prompt chunk). */
    Copy prepare(KvCache cache, int position, int count) {
        Copy copy = find(cache);
        if (copy != null && position + count > copy.capacity) {
            drop(copy);
            copy = null;
        }
        if (copy == null) {
            int capacity = Math.min(cache.maxPositions(), Math.max(position + count, Math.max(256, 2 * position)));
            evictFor();
            copy = new Copy(cache, capacity);
            copies.add(copy);
        }
        copy.lastUse = ++uses;
        if (copy.valid > position) {
            copy.valid = position; // a rewound sequence: its later positions are recomputed
        } else if (copy.valid < position) {
            upload(cache, copy, copy.valid, position);
            copy.valid = position;
        }
        return copy;
    }

    /** Whether {@code copy} is still one of the live copies (not dropped, its device memory not freed). */
    boolean live(Copy copy) {
        return copies.contains(copy);
    }

    /** Largest capacity of the live copies (what per-position scratch must hold). */
    int maxCapacity() {
        int max = 0;
        for (Copy c : copies) {
            max = Math.max(max, c.capacity);
        }
        return max;
    }

    private Copy find(KvCache cache) {
        for (Iterator<Copy> it = copies.iterator(); it.hasNext(); ) {
            Copy c = it.next();
            KvCache owner = c.owner.get();
            if (owner == cache) {
                return c;
            }
            if (owner == null) {
                cu.synchronize(stream); // earlier passes may still read it
                cu.free(c.base);
                it.remove();
            }
        }
        return null;
    }

    private void evictFor() {
        while (copies.size() >= maxCopies) {
            Copy oldest = copies.getFirst();
            for (Copy c : copies) {
                oldest = c.lastUse < oldest.lastUse ? c : oldest;
            }
            drop(oldest);
        }
    }

    private void drop(Copy c) {
        cu.synchronize(stream); // earlier passes may still read it
        cu.free(c.base);
        copies.remove(c);
    }

    /** Positions {@code [from, to)} of every block from the host cache (F16 bits) to the device. */
    private void upload(KvCache cache, Copy copy, int from, int to) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment halves = a.allocate(Math.max(2, 2L * (to - from) * Math.max(keyWidth, valueWidth)), 2);
            for (int b = 0; b < blocks; b++) {
                copyHalves(cache.keys(b), keyWidth, from, to, halves, copy.keys(b));
                copyHalves(cache.values(b), valueWidth, from, to, halves, copy.values(b));
            }
        }
    }

    private void copyHalves(short[] src, int width, int from, int to, MemorySegment halves, long device) {
        if (width == 0) {
            return; // values that are a view of the keys (latent attention)
        }
        int n = (to - from) * width;
        MemorySegment.copy(src, from * width, halves, JAVA_SHORT, 0, n);
        cu.copyToDevice(device + 2L * from * width, halves, 2L * n, stream);
        cu.synchronize(stream); // the staging buffer is reused for the next block
    }

    @Override
    public void close() {
        for (Copy c : copies) {
            cu.free(c.base);
        }
        copies.clear();
    }
}
