package dev.lazarus.kt.model;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.tensor.GgmlSums;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The vectorized attention products against a one-product-at-a-time statement of ggml_vec_dot_f16's
 * order: they must agree bit for bit, since the greedy parity with llama-server depends on it.
 */
class AttentionKernelTest {

    @ParameterizedTest
    @CsvSource({"64, 1", "64, 16", "128, 7", "128, 200", "192, 65", "80, 33", "512, 130", "72, 47", "576, 35"})
    void productsFollowGgmlOrderBitForBit(int dim, int positions) {
        long seed = System.nanoTime();
        Random rnd = new Random(seed);
        float[] q = f16s(rnd, dim);
        float[] keys = f16s(rnd, positions * dim + 3);
        for (int t = 0; t < positions; t++) {
            assertThat(AttentionKernel.keyDot(q, F16LanesTest.bits(keys), t * dim + 3, dim)).as("seed=%dL key %d", seed, t)
                    .isEqualTo(reference(q, 0, 1, keys, t * dim + 3, 1, dim, dim & -64));
        }
        // all positions at once: 16 at a time (dimensions that are multiples of 64), the rest one by one
        float[] scores = new float[positions + 1];
        AttentionKernel.keyDots(q, dim, F16LanesTest.bits(keys), 3, dim, positions, scores);
        for (int t = 0; t < positions; t++) {
            assertThat(scores[t]).as("seed=%dL keys at once, key %d", seed, t)
                    .isEqualTo(reference(q, 0, 1, keys, t * dim + 3, 1, dim, dim & -64));
        }
        int vStride = dim + 5;
        float[] p = f16s(rnd, positions);
        float[] values = f16s(rnd, positions * vStride);
        float[] out = new float[dim + 2];
        AttentionKernel.valueDots(p, positions, F16LanesTest.bits(values), 2, vStride, dim, out, 1);
        for (int d = 0; d < dim; d++) {
            assertThat(out[1 + d]).as("seed=%dL value column %d", seed, d)
                    .isEqualTo(reference(p, 0, 1, values, 2 + d, vStride, positions, positions));
        }
    }

    @ParameterizedTest
    @CsvSource({"64, 1", "128, 300", "192, 33", "576, 20"})
    void theNativeKeyDotsSumAsTheJavaOnes(int dim, int positions) {
        long seed = System.nanoTime();
        Random rnd = new Random(seed);
        float[] q = f16s(rnd, dim);
        short[] keys = F16LanesTest.bits(f16s(rnd, (positions + 1) * (dim + 8) + 5));
        float[] ours = new float[positions + 2], java = new float[positions + 2];
        boolean native_ = dev.lazarus.kt.tensor.NativeKernels.f16KeyDots(q, dim, keys, 5, dim + 8, 1, positions + 1,
                ours);
        AttentionKernel.keyDotsJava(q, dim, keys, 5, dim + 8, 1, positions + 1, java, new float[256]);
        assertThat(native_).as("native kernels on an AVX-512 host")
                .isEqualTo(dev.lazarus.kt.tensor.NativeKernels.best().isPresent()
                        && dev.lazarus.kt.host.HostCpu.flags().contains("avx512f"));
        if (native_) {
            for (int t = 1; t <= positions; t++) {
                assertThat(Float.floatToRawIntBits(ours[t])).as("seed=%dL t=%d", seed, t)
                        .isEqualTo(Float.floatToRawIntBits(java[t]));
            }
        }
    }

    @ParameterizedTest
    @CsvSource({"64, 1", "128, 300", "80, 77", "16, 64", "512, 49"})
    void theNativeValueDotsSumAsTheJavaOnes(int vDim, int positions) {
        long seed = System.nanoTime();
        Random rnd = new Random(seed);
        int vStride = vDim + 24;
        float[] p = f16s(rnd, positions);
        short[] values = F16LanesTest.bits(f16s(rnd, positions * vStride + 8));
        float[] ours = new float[vDim + 3], java = new float[vDim + 3];
        boolean native_ = dev.lazarus.kt.tensor.NativeKernels.f16ValueDots(p, positions, values, 8, vStride, vDim, ours,
                3);
        AttentionKernel.valueColumnsJava(p, positions, values, 8, vStride, vDim, java, 3, new float[1024]);
        assertThat(native_).as("native kernels on an AVX-512 host")
                .isEqualTo(dev.lazarus.kt.tensor.NativeKernels.best().isPresent()
                        && dev.lazarus.kt.host.HostCpu.flags().contains("avx512f"));
        if (native_) {
            for (int d = 0; d < vDim + 3; d++) {
                assertThat(Float.floatToRawIntBits(ours[d])).as("seed=%dL d=%d", seed, d)
                        .isEqualTo(Float.floatToRawIntBits(java[d]));
            }
        }
    }

    @ParameterizedTest
    @CsvSource({"64, 40, 16", "64, 16, 16", "128, 70, 33", "80, 5, 2"})
    void aSlidingWindowIgnoresEarlierPositionsAndASinkTakesItsShare(int dim, int positions, int window) {
        long seed = System.nanoTime();
        Random rnd = new Random(seed);
        float[] q = f16s(rnd, dim);
        float[] keys = f16s(rnd, positions * dim);
        float[] values = f16s(rnd, positions * dim);
        int first = Math.max(0, positions - window);
        float[] windowed = attend(q, keys, values, dim, first, positions, Float.NEGATIVE_INFINITY);
        // what lies before the window does not matter, to the bit
        float[] otherKeys = keys.clone(), otherValues = values.clone();
        for (int i = 0; i < first * dim; i++) {
            otherKeys[i] = -otherKeys[i];
            otherValues[i] = 7f;
        }
        assertThat(attend(q, otherKeys, otherValues, dim, first, positions, Float.NEGATIVE_INFINITY))
                .as("seed=%dL", seed).isEqualTo(windowed);
        if (first > 0) {
            assertThat(attend(q, keys, values, dim, 0, positions, Float.NEGATIVE_INFINITY)).as("seed=%dL", seed)
                    .isNotEqualTo(windowed);
        }
        // no window and no sink is the plain overload, to the bit
        float[] plain = new float[dim];
        AttentionKernel.attend(q, 0, dim, F16LanesTest.bits(keys), 0, dim, F16LanesTest.bits(values), 0, dim, dim, positions,
                0.125f, plain, 0);
        assertThat(attend(q, keys, values, dim, 0, positions, Float.NEGATIVE_INFINITY)).isEqualTo(plain);
        // values of 1: the output is the probabilities' sum, which a sink of weight e^s / (e^s + sum of e^score)
        // lowers from 1 (tolerance: each probability is rounded to F16 before it weighs a value, at most 2^-11 of
        // the sum, 4.9e-4)
        float[] ones = new float[positions * dim];
        java.util.Arrays.fill(ones, 1f);
        float sink = 1.5f;
        double denominator = Math.exp(sink);
        for (int t = first; t < positions; t++) {
            denominator += Math.exp(0.125 * AttentionKernel.keyDot(roundedToF16(q), F16LanesTest.bits(keys), t * dim, dim));
        }
        double expected = 1 - Math.exp(sink) / denominator;
        assertThat((double) attend(q, keys, ones, dim, first, positions, sink)[0]).as("seed=%dL", seed)
                .isCloseTo(expected, org.assertj.core.api.Assertions.within(1e-3));
    }

    private static float[] attend(float[] q, float[] keys, float[] values, int dim, int first, int positions, float sink) {
        float[] out = new float[dim];
        AttentionKernel.attend(q, 0, dim, F16LanesTest.bits(keys), 0, dim, F16LanesTest.bits(values), 0, dim, dim, first,
                positions, 0.125f, sink, out, 0);
        return out;
    }

    private static float[] roundedToF16(float[] x) {
        float[] out = x.clone();
        Numerics.roundToF16(out, 0, out.length);
        return out;
    }

    /** ggml_vec_dot_f16 (AVX-512), one product at a time: 64 accumulator slots, (0+2)+(1+3), reduce16, tail. */
    private static float reference(float[] a, int aOff, int aStride, float[] b, int bOff, int bStride, int n, int vectorEnd) {
        float[] sum = new float[64];
        for (int i = 0; i < vectorEnd; i++) {
            int slot = ((i / 16) & 3) * 16 + (i & 15);
            sum[slot] = Math.fma(a[aOff + i * aStride], b[bOff + i * bStride], sum[slot]);
        }
        float[] lanes = new float[16];
        for (int l = 0; l < 16; l++) {
            lanes[l] = (sum[l] + sum[32 + l]) + (sum[16 + l] + sum[48 + l]);
        }
        double total = GgmlSums.reduce16(lanes, 0);
        for (int i = vectorEnd; i < n; i++) {
            total += a[aOff + i * aStride] * b[bOff + i * bStride];
        }
        return (float) total;
    }

    private static float[] f16s(Random rnd, int n) {
        float[] v = new float[n];
        for (int i = 0; i < n; i++) {
            v[i] = Float.float16ToFloat(Float.floatToFloat16((float) rnd.nextGaussian()));
        }
        return v;
    }
}
