package dev.lazarus.kt.model;

/**
 * {@link FlashKv} over a cache's rows of any {@link KvCacheType}: K's vec_dot after the query's conversion to K's
 * {@code vec_dot_type} ({@link TypedKvAttention#keyDots}); an F16 V added in F16 as {@link FlashKv.F16} adds it, any
 * other V converted by its {@code to_float} and added by {@code ggml_vec_mad_f32} into an F32 accumulator. ggml takes
 * its tiled and split orders only for F16 (or F32) K and V of one type, so these rows offer no {@link #floatRows}
 * unless both are F16 (held as their bits).
 */
record TypedFlashKv(KvRows keys, int kOff, KvRows values, int vOff, int valueDim) implements FlashKv {

    private static final ThreadLocal<float[][]> ROW = ThreadLocal.withInitial(() -> new float[1][0]);

    /** The cache's head at {@code kOff}/{@code vOff} as flash attention reads it: F16 rows as {@link FlashKv#f16}. */
    static FlashKv of(KvRows keys, int kOff, KvRows values, int vOff, int valueDim) {
        if (keys.type() == KvCacheType.F16 && values.type() == KvCacheType.F16) {
            return FlashKv.f16(keys.halves(), kOff, keys.width(), values.halves(), vOff, values.width(), valueDim);
        }
        return new TypedFlashKv(keys, kOff, values, vOff, valueDim);
    }

    @Override
    public void keyDots(float[] q, int qOff, int dim, int from, int to, float[] scores) {
        TypedKvAttention.keyDots(q, qOff, dim, keys, kOff, from, to, scores);
    }

    @Override
    public boolean f16Accumulator() {
        return values.type() == KvCacheType.F16;
    }

    @Override
    public void addValue(int t, float w, float[] acc) {
        if (values.type() == KvCacheType.F16) {
            FlashAttentionKernel.madF16(acc, values.halves(), t * values.width() + vOff, valueDim, w);
            return;
        }
        float[][] row = ROW.get();
        if (row[0].length < valueDim) {
            row[0] = new float[valueDim];
        }
        values.read(t, vOff, valueDim, row[0], 0);
        FlashAttentionKernel.madF32(acc, row[0], 0, valueDim, w);
    }

    @Override
    public FloatRows floatRows() {
        return null;
    }
}
