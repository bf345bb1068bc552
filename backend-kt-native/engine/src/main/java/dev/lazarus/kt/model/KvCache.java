package dev.lazarus.kt.model;

import dev.lazarus.kt.tensor.GgmlOrders;
import java.util.Arrays;

/**
 * The attention keys and values of one sequence, position-major per block, each stored as its
 * {@link KvCacheTypes type} ({@link KvRows}): F16 (llama-server's default) as its 16 bits, the other types as
 * ggml's bytes, so a cache takes the bytes llama-server's does. Grows on demand up to {@code maxPositions}. Not thread-safe: the scheduler owns it;
 * during a forward pass blocks write the batch's positions before any thread reads.
 */
public final class KvCache {

    private final KvLayout layout;
    private final KvCacheTypes types;
    private final int maxPositions;
    private final KvRows[] keys;
    /** Null where a block's values are a view of its keys (absorbed MLA). */
    private final KvRows[] values;
    /**
     * Per recurrent block the sequence's state after its {@link #length} tokens, always f32 (the cache types apply
     * to attention rows only); null for attention blocks.
     */
    private final float[][] recurrent;
    private int capacity;
    private int length;

    public KvCache(KvLayout layout, int maxPositions) {
        this(layout, KvCacheTypes.F16, maxPositions);
    }

    /** With the host's ggml orders for the dots of quantised rows (tests; a model passes its own). */
    public KvCache(KvLayout layout, KvCacheTypes types, int maxPositions) {
        this(layout, types, maxPositions, GgmlOrders.forHost());
    }

    public KvCache(KvLayout layout, KvCacheTypes types, int maxPositions, GgmlOrders orders) {
        this.layout = layout;
        this.types = types;
        this.maxPositions = maxPositions;
        this.keys = new KvRows[layout.blocks()];
        this.values = new KvRows[layout.blocks()];
        this.recurrent = new float[layout.blocks()][];
        capacity = Math.min(maxPositions, 64);
        for (int b = 0; b < layout.blocks(); b++) {
            keys[b] = new KvRows(types.keys(), layout.keyWidths()[b], capacity, orders);
            int vw = layout.valueWidths()[b];
            values[b] = vw == 0 ? null : new KvRows(types.values(), vw, capacity, orders);
            int rw = layout.recurrentWidths()[b];
            recurrent[b] = rw == 0 ? null : new float[rw];
        }
    }

    public int maxPositions() {
        return maxPositions;
    }

    public KvCacheTypes types() {
        return types;
    }

    /** Positions holding valid keys and values. */
    public int length() {
        return length;
    }

    public void setLength(int length) {
        if (length < 0 || length > capacity) {
            throw new IllegalArgumentException("length " + length + " outside 0.." + capacity);
        }
        this.length = length;
    }

    /** Makes room for {@code positions} positions; throws {@link KvCacheFullException} past the maximum. */
    public void ensureCapacity(int positions) {
        if (positions > maxPositions) {
            throw new KvCacheFullException(positions, maxPositions);
        }
        if (positions > capacity) {
            int newCapacity = Math.min(maxPositions, Math.max(positions, capacity * 2));
            for (int b = 0; b < layout.blocks(); b++) {
                keys[b].grow(newCapacity);
                if (values[b] != null) {
                    values[b].grow(newCapacity);
                }
            }
            capacity = newCapacity;
        }
    }

    /** The block's keys as F16 bits: F16 keys only (the layout the GPU layer path and the F16 loops read). */
    public short[] keys(int block) {
        return halves(keys[block]);
    }

    /** The block's values as F16 bits, or its keys when values are a view of them (absorbed MLA): F16 only. */
    public short[] values(int block) {
        return halves(valueRows(block));
    }

    private static short[] halves(KvRows rows) {
        if (rows.halves() == null) {
            throw new IllegalStateException("a " + rows.type().settingName() + " KV cache is not held as F16");
        }
        return rows.halves();
    }

    KvRows keyRows(int block) {
        return keys[block];
    }

    /** The block's values, or its keys when values are a view of them. */
    KvRows valueRows(int block) {
        return values[block] == null ? keys[block] : values[block];
    }

    /** The block's recurrent state (updated in place by the forward pass); null for attention blocks. */
    public float[] recurrent(int block) {
        return recurrent[block];
    }

    /** Whether this cache holds recurrent state, which serves a longer prompt only as a whole ({@link #copyPrefixFrom}). */
    public boolean hasRecurrentState() {
        return layout.hasRecurrentState();
    }

    public int keyWidth(int block) {
        return layout.keyWidths()[block];
    }

    public int valueStride(int block) {
        int vw = layout.valueWidths()[block];
        return vw == 0 ? layout.keyWidths()[block] : vw;
    }

    /** Stores one position's keys (and values, unless they are a view of keys), converted to the cache's types. */
    public void store(int block, int position, float[] k, int kOff, float[] v, int vOff) {
        keys[block].store(position, k, kOff);
        if (values[block] != null) {
            values[block].store(position, v, vOff);
        }
    }

    /**
     * Copies the first {@code positions} positions of another cache of the same layout and types (prefix reuse). A
     * recurrent state is the state after all of the source's positions: such a cache is copied whole or not at all.
     */
    public void copyPrefixFrom(KvCache source, int positions) {
        if (source.layout != layout && !Arrays.equals(source.layout.keyWidths(), layout.keyWidths())
                || !source.types.equals(types)) {
            throw new IllegalArgumentException("caches of different layouts or types");
        }
        if (hasRecurrentState() && positions != source.length) {
            throw new IllegalArgumentException("a recurrent state holds all " + source.length + " positions, not "
                    + positions);
        }
        for (int b = 0; b < layout.blocks(); b++) {
            if (recurrent[b] != null) {
                System.arraycopy(source.recurrent[b], 0, recurrent[b], 0, recurrent[b].length);
            }
        }
        ensureCapacity(positions);
        for (int b = 0; b < layout.blocks(); b++) {
            keys[b].copyFrom(source.keys[b], positions);
            if (values[b] != null) {
                values[b].copyFrom(source.values[b], positions);
            }
        }
        length = positions;
    }

    /** Bytes held now (recurrent state f32). */
    public long bytes() {
        long n = 0;
        for (int b = 0; b < layout.blocks(); b++) {
            n += keys[b].bytes() + (values[b] == null ? 0 : values[b].bytes())
                    + (recurrent[b] == null ? 0 : 4L * recurrent[b].length);
        }
        return n;
    }
}
