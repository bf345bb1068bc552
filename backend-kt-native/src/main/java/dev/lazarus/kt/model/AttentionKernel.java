package dev.lazarus.kt.model;

import dev.lazarus.kt.tensor.GgmlSums;

/**
 * Scaled dot-product attention of one query head over a cached sequence, rounded exactly like
 * llama.cpp's non-flash CPU path (llama-server {@code -fa off}): the query is rounded to F16 to meet the
 * F16 keys, scores and softmax are f32 ({@link Numerics#softmax}), and the probabilities are rounded to
 * F16 before they weight the F16 values (V is multiplied transposed: output d is the dot of the
 * probabilities with column d of the values).
 *
 * <p>Both products are ggml matrix multiplications, summed in {@code ggml_vec_dot_f16}'s order for
 * batches and single tokens alike (Debian's build has no llamafile tinyBLAS): four 16-lane
 * accumulators over 64-value steps, combined (0+2) + (1+3), the lanes summed horizontally into a double,
 * then a scalar tail past a multiple of 64. The masked padding llama-server adds to its KV cache (to a
 * multiple of 256 positions) only adds exact zeros, so the value product sums just the real positions,
 * with no tail.
 */
final class AttentionKernel {

    private static final int LANES = 16;

    private AttentionKernel() {}

    /**
     * @param q        query values at {@code qOff}, {@code dim} of them
     * @param keys     position-major keys; position t's head at {@code t * kStride + kOff}
     * @param values   position-major values; position t's head at {@code t * vStride + vOff}
     * @param positions how many positions to attend (0..position of the query, inclusive)
     */
    static void attend(float[] q, int qOff, int dim,
                       float[] keys, int kOff, int kStride,
                       float[] values, int vOff, int vStride, int vDim,
                       int positions, float scale, float[] out, int outOff) {
        float[] qh = new float[dim];
        for (int i = 0; i < dim; i++) {
            qh[i] = Numerics.roundToF16(q[qOff + i]);
        }
        float[] scores = new float[positions];
        for (int t = 0; t < positions; t++) {
            scores[t] = vecDot(qh, 0, 1, keys, t * kStride + kOff, 1, dim, dim & -64);
        }
        Numerics.softmax(scores, positions, scale);
        for (int t = 0; t < positions; t++) {
            scores[t] = Numerics.roundToF16(scores[t]);
        }
        for (int d = 0; d < vDim; d++) {
            out[outOff + d] = vecDot(scores, 0, 1, values, vOff + d, vStride, positions, positions);
        }
    }

    /**
     * ggml_vec_dot_f16 (AVX-512) of {@code n} values, the first {@code vectorEnd} (a multiple of 64, or
     * {@code n} when the rest of a padded row is zeros) in its vector loop, the others as its scalar tail.
     */
    static float vecDot(float[] a, int aOff, int aStride, float[] b, int bOff, int bStride, int n, int vectorEnd) {
        float[] sum = new float[4 * LANES];
        for (int i = 0; i < vectorEnd; i++) {
            int slot = ((i / LANES) & 3) * LANES + (i & (LANES - 1));
            sum[slot] = Math.fma(a[aOff + i * aStride], b[bOff + i * bStride], sum[slot]);
        }
        float[] lanes = new float[LANES];
        for (int l = 0; l < LANES; l++) {
            lanes[l] = (sum[l] + sum[2 * LANES + l]) + (sum[LANES + l] + sum[3 * LANES + l]);
        }
        double total = GgmlSums.reduce16(lanes, 0);
        for (int i = vectorEnd; i < n; i++) {
            total += a[aOff + i * aStride] * b[bOff + i * bStride];
        }
        return (float) total;
    }
}
