package dev.lazarus.kt.model;

/**
 * Scaled dot-product attention of one query head over a cached sequence, rounded exactly like
 * llama.cpp's non-flash CPU path (llama-server {@code -fa off}): the query is rounded to F16 to meet the
 * F16 keys, scores and softmax are f32 ({@link Numerics#softmax}), and the probabilities are rounded to
 * F16 before they weight the F16 values.
 *
 * <p>Both products are ggml matrix multiplications whose f32 summation order depends on the batch: a
 * batch of two or more tokens (prompt processing) goes through llamafile's tinyBLAS, one 16-lane
 * accumulator per output advanced by fused multiply-adds over 16-value chunks, then a horizontal sum;
 * a single token (decoding) goes through {@code ggml_vec_dot_f16}, four 16-lane accumulators over
 * 64-value steps, combined pairwise and summed horizontally into a double, with a scalar tail. Matching
 * each order bit for bit is what keeps quantized activations downstream rounding the same way; the
 * masked padding llama-server adds to its KV cache (to a multiple of 256 positions) only adds exact zeros.
 */
final class AttentionKernel {

    private static final int LANES = 16;

    private AttentionKernel() {}

    /**
     * @param q        query values at {@code qOff}, {@code dim} of them
     * @param keys     position-major keys; position t's head at {@code t * kStride + kOff}
     * @param values   position-major values; position t's head at {@code t * vStride + vOff}
     * @param positions how many positions to attend (0..position of the query, inclusive)
     * @param batched  whether the forward batch holds two or more tokens (ggml then takes its GEMM path)
     */
    static void attend(float[] q, int qOff, int dim,
                       float[] keys, int kOff, int kStride,
                       float[] values, int vOff, int vStride, int vDim,
                       int positions, float scale, float[] out, int outOff, boolean batched) {
        float[] qh = new float[dim];
        for (int i = 0; i < dim; i++) {
            qh[i] = Numerics.roundToF16(q[qOff + i]);
        }
        float[] scores = new float[positions];
        boolean gemm = batched && dim % LANES == 0; // tinyBLAS declines other widths: ggml falls back to vec_dot
        for (int t = 0; t < positions; t++) {
            scores[t] = gemm ? gemmDot(qh, 0, 1, keys, t * kStride + kOff, 1, dim)
                    : vecDot(qh, 0, 1, keys, t * kStride + kOff, 1, dim);
        }
        Numerics.softmax(scores, positions, scale);
        for (int t = 0; t < positions; t++) {
            scores[t] = Numerics.roundToF16(scores[t]);
        }
        // V is multiplied transposed: output d is the dot of the probabilities with column d of the values
        // over the cache length, which llama-server pads to a multiple of 64 (so vec_dot has no scalar tail)
        for (int d = 0; d < vDim; d++) {
            out[outOff + d] = batched ? gemmDot(scores, 0, 1, values, vOff + d, vStride, positions)
                    : vecDotPadded(scores, values, vOff + d, vStride, positions);
        }
    }

    /** tinyBLAS: acc[l] = fma(a, b, acc[l]) over chunks of 16, then the 16 lanes summed as GCC's reduce_add. */
    static float gemmDot(float[] a, int aOff, int aStride, float[] b, int bOff, int bStride, int n) {
        float[] acc = new float[LANES];
        for (int i = 0; i < n; i++) {
            acc[i % LANES] = Math.fma(a[aOff + i * aStride], b[bOff + i * bStride], acc[i % LANES]);
        }
        return GgmlExp.reduce16(acc, 0);
    }

    /** ggml_vec_dot_f16 (AVX-512) over {@code n} values, the part past a multiple of 64 as its scalar tail. */
    static float vecDot(float[] a, int aOff, int aStride, float[] b, int bOff, int bStride, int n) {
        int vectorEnd = n & -64;
        float[][] sum = new float[4][LANES];
        for (int i = 0; i < vectorEnd; i++) {
            int j = (i / LANES) % 4;
            sum[j][i % LANES] = Math.fma(a[aOff + i * aStride], b[bOff + i * bStride], sum[j][i % LANES]);
        }
        double total = reduce(sum);
        for (int i = vectorEnd; i < n; i++) {
            total += a[aOff + i * aStride] * b[bOff + i * bStride];
        }
        return (float) total;
    }

    private static float vecDotPadded(float[] p, float[] values, int vOff, int vStride, int n) {
        float[][] sum = new float[4][LANES];
        for (int i = 0; i < n; i++) {
            int j = (i / LANES) % 4;
            sum[j][i % LANES] = Math.fma(p[i], values[vOff + i * vStride], sum[j][i % LANES]);
        }
        return (float) reduce(sum);
    }

    /** GGML_F32x16_REDUCE: accumulators 0+2 and 1+3, then those two, then the 16 lanes. */
    private static double reduce(float[][] sum) {
        float[] s = new float[LANES];
        for (int l = 0; l < LANES; l++) {
            s[l] = (sum[0][l] + sum[2][l]) + (sum[1][l] + sum[3][l]);
        }
        return GgmlExp.reduce16(s, 0);
    }
}
