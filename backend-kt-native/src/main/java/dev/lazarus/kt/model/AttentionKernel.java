package dev.lazarus.kt.model;

import dev.lazarus.kt.tensor.FloatOps;

/**
 * Scaled dot-product attention of one query head over a cached sequence, with llama.cpp's
 * non-flash CPU rounding: the query is rounded to F16 to meet the F16 keys, scores and softmax are
 * f32, and the probabilities are rounded to F16 before they weight the F16 values.
 */
final class AttentionKernel {

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
            // vectorized like ggml's f16 dot: the sum order differs from a plain loop, the rounding does not
            scores[t] = FloatOps.dot(qh, 0, keys, t * kStride + kOff, dim);
        }
        Numerics.softmax(scores, positions, scale);
        for (int d = 0; d < vDim; d++) {
            out[outOff + d] = 0f;
        }
        for (int t = 0; t < positions; t++) {
            float p = Numerics.roundToF16(scores[t]);
            FloatOps.axpy(p, values, t * vStride + vOff, out, outOff, vDim);
        }
    }
}
