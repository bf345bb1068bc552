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
            assertThat(AttentionKernel.keyDot(q, keys, t * dim + 3, dim)).as("seed=%dL key %d", seed, t)
                    .isEqualTo(reference(q, 0, 1, keys, t * dim + 3, 1, dim, dim & -64));
        }
        // all positions at once: 16 at a time (dimensions that are multiples of 64), the rest one by one
        float[] scores = new float[positions + 1];
        AttentionKernel.keyDots(q, dim, keys, 3, dim, positions, scores);
        for (int t = 0; t < positions; t++) {
            assertThat(scores[t]).as("seed=%dL keys at once, key %d", seed, t)
                    .isEqualTo(reference(q, 0, 1, keys, t * dim + 3, 1, dim, dim & -64));
        }
        int vStride = dim + 5;
        float[] p = f16s(rnd, positions);
        float[] values = f16s(rnd, positions * vStride);
        float[] out = new float[dim + 2];
        AttentionKernel.valueDots(p, positions, values, 2, vStride, dim, out, 1);
        for (int d = 0; d < dim; d++) {
            assertThat(out[1 + d]).as("seed=%dL value column %d", seed, d)
                    .isEqualTo(reference(p, 0, 1, values, 2 + d, vStride, positions, positions));
        }
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
