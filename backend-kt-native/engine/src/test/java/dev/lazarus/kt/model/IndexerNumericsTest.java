package dev.lazarus.kt.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.Random;
import org.junit.jupiter.api.Test;

/** The ggml ops deepseek32's indexer adds: the fast Walsh-Hadamard transform and the layer norm. */
class IndexerNumericsTest {

    @Test
    void theHadamardTransformIsOrthonormalAndItsOwnInverse() {
        Random random = new Random(3);
        for (int n : new int[] {64, 128}) {
            float[] x = new float[n];
            for (int i = 0; i < n; i++) {
                x[i] = (float) random.nextGaussian();
            }
            float[] y = x.clone();
            Numerics.hadamard(y, 0, n);
            double before = 0, after = 0;
            for (int i = 0; i < n; i++) {
                before += x[i] * x[i];
                after += y[i] * y[i];
            }
            assertThat(after).isCloseTo(before, within(1e-4 * before));
            Numerics.hadamard(y, 0, n);
            for (int i = 0; i < n; i++) {
                assertThat(y[i]).isCloseTo(x[i], within(1e-5f));
            }
        }
        // a unit vector becomes the first row of H / sqrt(n): all equal
        float[] e = new float[64];
        e[0] = 1;
        Numerics.hadamard(e, 0, 64);
        for (float v : e) {
            assertThat(v).isEqualTo(0.125f);
        }
    }

    @Test
    void theLayerNormCentresScalesThenAppliesWeightAndBias() {
        float[] x = new float[70]; // a 16-lane part and a tail
        float[] weight = new float[70];
        float[] bias = new float[70];
        for (int i = 0; i < x.length; i++) {
            x[i] = 3 + (i % 7) - 0.5f * (i % 3);
            weight[i] = 2;
            bias[i] = 1;
        }
        float[] out = new float[70];
        Numerics.layerNorm(x, 0, 70, weight, bias, 1e-6f, out, 0);
        double mean = 0, var = 0;
        for (float v : out) {
            mean += (v - 1) / 2;
        }
        mean /= 70;
        for (float v : out) {
            var += Math.pow((v - 1) / 2 - mean, 2);
        }
        assertThat(mean).isCloseTo(0, within(1e-5));
        assertThat(var / 70).isCloseTo(1, within(1e-4));
    }
}
