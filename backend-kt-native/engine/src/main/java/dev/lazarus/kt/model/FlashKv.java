package dev.lazarus.kt.model;

/**
 * One KV head's keys and values as ggml's CPU flash attention reads them: the two operations that differ with the
 * cache type ({@code -ctk}/{@code -ctv}). ggml converts the query with the {@code from_float} of K's
 * {@code vec_dot_type} and scores it with K's {@code vec_dot}; it adds a weighted V row with
 * {@code ggml_vec_mad_f16} into an F16 accumulator when V is F16, else with {@code to_float} and
 * {@code ggml_vec_mad_f32} into an F32 one. {@link FlashAttentionKernel} owns the online softmax around them.
 */
interface FlashKv {

    /** Width of one value row. */
    int valueDim();

    /**
     * {@code scores[t] = K_t · q} for t in [from, to), unscaled, as K's {@code vec_dot} computes it after the query
     * was converted to K's {@code vec_dot_type}.
     */
    void keyDots(float[] q, int qOff, int dim, int from, int to, float[] scores);

    /** Whether ggml accumulates V in F16 (V is F16): every {@link #addValue} and rescale then rounds to F16. */
    boolean f16Accumulator();

    /** {@code acc[d] += w · V_t[d]}, rounded as the {@code ggml_vec_mad} for V's type rounds it. */
    void addValue(int t, float w, float[] acc);

    /**
     * The V part of a row chunk of ggml's one_chunk: for each {@code k < count}, the accumulator rescaled by
     * {@code rescale[k]} where that is not 1 (a new maximum: ggml_vec_scale in the accumulator's type), then
     * position {@code kept[k]}'s value added with weight {@code weight[k]} ({@link #addValue}).
     */
    default void addValues(int[] kept, float[] rescale, float[] weight, int count, float[] acc) {
        for (int k = 0; k < count; k++) {
            if (rescale[k] != 1f) {
                FlashAttentionKernel.scaleAccumulator(acc, valueDim(), rescale[k], f16Accumulator());
            }
            addValue(kept[k], weight[k], acc);
        }
    }

    /**
     * The keys and values as F16 bits when ggml's tiled (prompt) and split-KV (decode) paths take them: K and V both
     * F16. Null for every other cache type, which ggml computes in the one-row order only.
     */
    FloatRows floatRows();

    /**
     * Position t's key at {@code keys[t·kStride + kOff ..]}, its value at {@code values[t·vStride + vOff ..]}, as F16
     * bits ({@link F16Lanes} widens them).
     */
    record FloatRows(short[] keys, int kOff, int kStride, short[] values, int vOff, int vStride) {}

    /** The default cache: K and V in F16, held as their bits. */
    static FlashKv f16(short[] keys, int kOff, int kStride, short[] values, int vOff, int vStride, int vDim) {
        return new F16(new FloatRows(keys, kOff, kStride, values, vOff, vStride), vDim);
    }

    /** F16 keys and values: the query rounded to F16 and ggml_vec_dot_f16; V added by fma, rounded to F16. */
    record F16(FloatRows rows, int valueDim) implements FlashKv {

        @Override
        public void keyDots(float[] q, int qOff, int dim, int from, int to, float[] scores) {
            FlashAttentionKernel.f16KeyDots(q, qOff, dim, rows, from, to, scores);
        }

        @Override
        public boolean f16Accumulator() {
            return true;
        }

        @Override
        public void addValue(int t, float w, float[] acc) {
            FlashAttentionKernel.madF16(acc, rows.values(), t * rows.vStride() + rows.vOff(), valueDim, w);
        }

        @Override
        public void addValues(int[] kept, float[] rescale, float[] weight, int count, float[] acc) {
            FlashAttentionKernel.madF16(acc, rows.values(), rows.vOff(), rows.vStride(), valueDim, kept, rescale,
                    weight, count);
        }

        @Override
        public FloatRows floatRows() {
            return rows;
        }
    }
}
