package dev.lazarus.kt.model;

import java.util.Arrays;

/**
 * The attention keys and values of one sequence, position-major per block. Values are rounded to
 * F16 when written (llama-server's default cache type) and held as f32 so the attention loops stay
 * simple; halving the footprint by storing F16 bits is a later optimisation. Grows on demand up to
 * {@code maxPositions}. Not thread-safe: the scheduler owns it; during a forward pass blocks write
 * the batch's positions before any thread reads.
 */
public final class KvCache {

    private final KvLayout layout;
    private final int maxPositions;
    private final float[][] keys;
    private final float[][] values;
    /** Per recurrent block the sequence's state after its {@link #length} tokens; null for attention blocks. */
    private final float[][] recurrent;
    private int capacity;
    private int length;

    public KvCache(KvLayout layout, int maxPositions) {
        this.layout = layout;
        this.maxPositions = maxPositions;
        this.keys = new float[layout.blocks()][];
        this.values = new float[layout.blocks()][];
        this.recurrent = new float[layout.blocks()][];
        for (int b = 0; b < layout.blocks(); b++) {
            int w = layout.recurrentWidths()[b];
            recurrent[b] = w == 0 ? null : new float[w];
        }
        allocate(Math.min(maxPositions, 64));
    }

    public int maxPositions() {
        return maxPositions;
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
            allocate(Math.min(maxPositions, Math.max(positions, capacity * 2)));
        }
    }

    private void allocate(int newCapacity) {
        for (int b = 0; b < layout.blocks(); b++) {
            keys[b] = grow(keys[b], layout.keyWidths()[b] * newCapacity);
            int vw = layout.valueWidths()[b];
            values[b] = vw == 0 ? null : grow(values[b], vw * newCapacity);
        }
        capacity = newCapacity;
    }

    private static float[] grow(float[] old, int size) {
        return old == null ? new float[size] : Arrays.copyOf(old, size);
    }

    public float[] keys(int block) {
        return keys[block];
    }

    /** The block's values, or its keys when values are a view of them (absorbed MLA). */
    public float[] values(int block) {
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

    /** Stores one position's keys (and values, unless they are a view of keys), rounded to F16. */
    public void store(int block, int position, float[] k, int kOff, float[] v, int vOff) {
        int kw = layout.keyWidths()[block];
        float[] kd = keys[block];
        for (int i = 0; i < kw; i++) {
            kd[position * kw + i] = Numerics.roundToF16(k[kOff + i]);
        }
        int vw = layout.valueWidths()[block];
        if (vw > 0) {
            float[] vd = values[block];
            for (int i = 0; i < vw; i++) {
                vd[position * vw + i] = Numerics.roundToF16(v[vOff + i]);
            }
        }
    }

    /**
     * Copies the first {@code positions} positions of another cache of the same layout (prefix reuse). A recurrent
     * state is the state after all of the source's positions: such a cache is copied whole or not at all.
     */
    public void copyPrefixFrom(KvCache source, int positions) {
        if (source.layout != layout && !Arrays.equals(source.layout.keyWidths(), layout.keyWidths())) {
            throw new IllegalArgumentException("caches of different layouts");
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
            int kw = layout.keyWidths()[b];
            System.arraycopy(source.keys[b], 0, keys[b], 0, positions * kw);
            int vw = layout.valueWidths()[b];
            if (vw > 0) {
                System.arraycopy(source.values[b], 0, values[b], 0, positions * vw);
            }
        }
        length = positions;
    }

    /** Bytes held now (f32 storage). */
    public long bytes() {
        long n = 0;
        for (int b = 0; b < layout.blocks(); b++) {
            n += keys[b].length + (values[b] == null ? 0 : values[b].length)
                    + (recurrent[b] == null ? 0 : recurrent[b].length);
        }
        return 4 * n;
    }
}
