package dev.lazarus.kt.model;

import dev.lazarus.kt.tensor.GgmlSums;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * The element-wise maths of the forward pass, written to round like ggml's CPU ops: sums of
 * squares and softmax denominators accumulate in double (ggml_float), everything else is f32.
 * These loops are O(dim) per token; the matrix products, where time goes, live in the kernels.
 */
public final class Numerics {

    private static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;

    private Numerics() {}

    /** {@code out = x / rms(x) * weight} over {@code n} values; {@code weight} may be null (plain normalisation). */
    public static void rmsNorm(float[] x, int off, int n, float[] weight, float eps, float[] out, int outOff) {
        double sum = 0;
        for (int i = 0; i < n; i++) {
            float v = x[off + i];
            sum += (double) (v * v);
        }
        float mean = (float) (sum / n);
        float scale = 1.0f / (float) Math.sqrt(mean + eps);
        for (int i = 0; i < n; i++) {
            float y = x[off + i] * scale;
            out[outOff + i] = weight == null ? y : y * weight[i];
        }
    }

    /**
     * In-place softmax of {@code x[0..n)} after multiplying by {@code scale}, as ggml's soft_max op on the
     * CPU: exponentials by {@link GgmlExp} (vector lanes in chunks of 16, the C library for the tail), each
     * chunk summed across its lanes in f32 and the chunk sums in double, then one multiply by the f32
     * inverse. Masked (future) positions, which llama.cpp adds as -inf, would contribute exact zeros. The
     * element-wise steps run in vector lanes (the same IEEE operations), the sums in their fixed order.
     */
    public static void softmax(float[] x, int n, float scale) {
        softmax(x, n, scale, Float.NEGATIVE_INFINITY);
    }

    /**
     * {@link #softmax(float[], int, float)} with an attention sink (gpt-oss): a logit that takes part in the
     * denominator but has no value, as ggml's soft_max with sinks: the sink (unscaled) joins the maximum, and its
     * C-library {@code expf} is added to the double sum after the row's chunks. {@code -inf}: no sink.
     */
    public static void softmax(float[] x, int n, float scale, float sink) {
        boolean hasSink = sink != Float.NEGATIVE_INFINITY;
        float max = scaleAndMax(x, n, scale);
        if (hasSink) {
            max = Math.max(max, sink);
        }
        double sum = 0;
        int c = 0;
        for (; c + GgmlExp.LANES <= n; c += GgmlExp.LANES) {
            GgmlExp.vexpMinus16(x, c, max);
            sum += GgmlSums.reduce16(x, c);
        }
        if (c < n) {
            // a partial last chunk of a row padded with masked positions (llama-server's KV cache is padded to
            // a multiple of 256) runs through the vector loop too, its padding adding zeros
            float[] lanes = new float[GgmlExp.LANES];
            for (int l = 0; c + l < n; l++) {
                lanes[l] = x[c + l] = GgmlExp.vexp(x[c + l] - max);
            }
            sum += GgmlSums.reduce16(lanes, 0);
        }
        if (hasSink) {
            sum += Libm.exp(sink - max);
        }
        scale(x, n, (float) (1.0 / sum));
    }

    /** {@code x[i] *= scale} for i in [0, n), returning the largest product (max is exact in any order). */
    private static float scaleAndMax(float[] x, int n, float scale) {
        FloatVector maxes = FloatVector.broadcast(F, Float.NEGATIVE_INFINITY);
        int i = 0;
        for (; i + F.length() <= n; i += F.length()) {
            FloatVector v = FloatVector.fromArray(F, x, i).mul(scale);
            v.intoArray(x, i);
            maxes = maxes.max(v);
        }
        float max = maxes.reduceLanes(VectorOperators.MAX);
        for (; i < n; i++) {
            x[i] *= scale;
            max = Math.max(max, x[i]);
        }
        return max;
    }

    private static void scale(float[] x, int n, float scale) {
        int i = 0;
        for (; i + F.length() <= n; i += F.length()) {
            FloatVector.fromArray(F, x, i).mul(scale).intoArray(x, i);
        }
        for (; i < n; i++) {
            x[i] *= scale;
        }
    }

    /**
     * Softmax of a whole unpadded row (router logits): ggml's vector loop for the chunks of 16, the C
     * library's expf and a plain double sum for the tail.
     */
    public static void softmaxRow(float[] x, int n) {
        float max = Float.NEGATIVE_INFINITY;
        for (int i = 0; i < n; i++) {
            max = Math.max(max, x[i]);
        }
        double sum = 0;
        int vectorEnd = n & -GgmlExp.LANES;
        for (int c = 0; c < vectorEnd; c += GgmlExp.LANES) {
            for (int l = 0; l < GgmlExp.LANES; l++) {
                x[c + l] = GgmlExp.vexp(x[c + l] - max);
            }
            sum += GgmlSums.reduce16(x, c);
        }
        for (int i = vectorEnd; i < n; i++) {
            x[i] = GgmlExp.libmExp(x[i] - max);
            sum += x[i];
        }
        float inv = (float) (1.0 / sum);
        for (int i = 0; i < n; i++) {
            x[i] *= inv;
        }
    }

    /** SiLU of element {@code i} of a row of {@code n}, rounded as ggml's swiglu/silu loops round it. */
    public static float silu(float x, int i, int n) {
        return GgmlExp.silu(x, i, n);
    }

    /** x / (1 + expf(-x)), ggml's scalar SiLU. */
    public static float silu(float x) {
        return x / (1.0f + Libm.exp(-x));
    }

    /** 1 / (1 + expf(-x)), ggml's sigmoid op (a scalar loop over the C library's expf). */
    public static float sigmoid(float x) {
        return 1.0f / (1.0f + Libm.exp(-x));
    }

    /** The value an F16 cache would hold: round to nearest-even half precision and back. */
    public static float roundToF16(float x) {
        return Float.float16ToFloat(Float.floatToFloat16(x));
    }

    public static void roundToF16(float[] x, int off, int n) {
        for (int i = off; i < off + n; i++) {
            x[i] = roundToF16(x[i]);
        }
    }

    public static void addInPlace(float[] acc, float[] x) {
        for (int i = 0; i < acc.length; i++) {
            acc[i] += x[i];
        }
    }
    /**
     * ggml's norm op (LayerNorm without its affine part), then {@code * weight + bias} as two more ops: the mean from a
     * double sum in order, the variance from 16-lane chunks of squared deviations each summed as
     * {@code _mm512_reduce_add_ps} into a double (then a scalar tail), divided by n in double.
     */
    public static void layerNorm(float[] x, int off, int n, float[] weight, float[] bias, float eps, float[] out,
                                 int outOff) {
        double total = 0;
        for (int i = 0; i < n; i++) {
            total += x[off + i];
        }
        float mean = (float) total / n;
        double squares = 0;
        float[] lanes = new float[16];
        int i = 0;
        for (; i + 15 < n; i += 16) {
            for (int l = 0; l < 16; l++) {
                float v = x[off + i + l] - mean;
                out[outOff + i + l] = v;
                lanes[l] = v * v;
            }
            squares += GgmlSums.reduce16(lanes, 0);
        }
        for (; i < n; i++) {
            float v = x[off + i] - mean;
            out[outOff + i] = v;
            squares += v * v;
        }
        float variance = (float) (squares / n);
        float scale = 1.0f / (float) Math.sqrt(variance + eps);
        for (int j = 0; j < n; j++) {
            float y = out[outOff + j] * scale * weight[j];
            out[outOff + j] = y + bias[j];
        }
    }

    /**
     * ggml's fast Walsh-Hadamard transform of {@code n} values in place (a power of two; what its CPU matrix product
     * does with a Hadamard-hinted source): scaled by {@code 1/sqrtf(n)} first, then butterflies of growing span.
     */
    public static void hadamard(float[] x, int off, int n) {
        float scale = 1.0f / (float) Math.sqrt(n);
        for (int j = 0; j < n; j++) {
            x[off + j] *= scale;
        }
        for (int len = 1; len < n; len <<= 1) {
            for (int i = 0; i < n; i += 2 * len) {
                for (int j = i; j < i + len; j++) {
                    float u = x[off + j];
                    float v = x[off + j + len];
                    x[off + j] = u + v;
                    x[off + j + len] = u - v;
                }
            }
        }
    }

    /**
     * {@code ggml_vec_dot_f32} on AVX-512: four 16-lane fma accumulators over 64-value steps, combined (0+2) + (1+3),
     * summed as {@link GgmlSums#reduce16}, then the tail one multiply and add at a time.
     */
    public static float dotF32(float[] a, int aOff, float[] b, int bOff, int n) {
        FloatVector s0 = FloatVector.zero(FloatVector.SPECIES_512), s1 = s0, s2 = s0, s3 = s0;
        int end = n & -64;
        for (int i = 0; i < end; i += 64) {
            s0 = FloatVector.fromArray(FloatVector.SPECIES_512, a, aOff + i)
                    .fma(FloatVector.fromArray(FloatVector.SPECIES_512, b, bOff + i), s0);
            s1 = FloatVector.fromArray(FloatVector.SPECIES_512, a, aOff + i + 16)
                    .fma(FloatVector.fromArray(FloatVector.SPECIES_512, b, bOff + i + 16), s1);
            s2 = FloatVector.fromArray(FloatVector.SPECIES_512, a, aOff + i + 32)
                    .fma(FloatVector.fromArray(FloatVector.SPECIES_512, b, bOff + i + 32), s2);
            s3 = FloatVector.fromArray(FloatVector.SPECIES_512, a, aOff + i + 48)
                    .fma(FloatVector.fromArray(FloatVector.SPECIES_512, b, bOff + i + 48), s3);
        }
        float[] lanes = new float[16];
        s0.add(s2).add(s1.add(s3)).intoArray(lanes, 0);
        float total = GgmlSums.reduce16(lanes, 0);
        for (int i = end; i < n; i++) {
            total += a[aOff + i] * b[bOff + i];
        }
        return total;
    }
}
