package dev.lazarus.kt.model;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.tensor.GgmlSums;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The vectorized softmax against a lane-at-a-time statement of ggml's soft_max order: bit for bit. */
class NumericsTest {

    @ParameterizedTest
    @CsvSource({"1, 4", "15, 4", "16, 4", "17, 30", "200, 8", "530, 4", "530, 200", "64, 1000"})
    void softmaxMatchesGgmlsOrderBitForBit(int n, float spread) {
        long seed = System.nanoTime();
        Random rnd = new Random(seed);
        float[] x = new float[n];
        for (int i = 0; i < n; i++) {
            // a wide spread sends whole chunks, or single lanes, below exp's normal range (the per-lane path)
            x[i] = (rnd.nextFloat() - 0.5f) * spread;
        }
        if (n > 20) {
            x[3] = Float.NEGATIVE_INFINITY;
        }
        float[] expected = x.clone();
        reference(expected, n, 0.125f);
        Numerics.softmax(x, n, 0.125f);
        for (int i = 0; i < n; i++) {
            assertThat(Float.floatToRawIntBits(x[i])).as("seed=%dL element %d: %s vs %s", seed, i, x[i], expected[i])
                    .isEqualTo(Float.floatToRawIntBits(expected[i]));
        }
    }

    @ParameterizedTest
    @CsvSource({"1, 4, 0", "17, 30, 2.5", "200, 8, -1", "64, 4, 40"})
    void softmaxWithASinkMatchesGgmlsOrderBitForBit(int n, float spread, float sink) {
        long seed = System.nanoTime();
        Random rnd = new Random(seed);
        float[] x = new float[n];
        for (int i = 0; i < n; i++) {
            x[i] = (rnd.nextFloat() - 0.5f) * spread;
        }
        float[] expected = x.clone();
        reference(expected, n, 0.125f, sink);
        float[] withoutSink = x.clone();
        Numerics.softmax(x, n, 0.125f, sink);
        double total = 0;
        for (int i = 0; i < n; i++) {
            assertThat(Float.floatToRawIntBits(x[i])).as("seed=%dL element %d: %s vs %s", seed, i, x[i], expected[i])
                    .isEqualTo(Float.floatToRawIntBits(expected[i]));
            total += x[i];
        }
        // the sink takes its share of the denominator: the row sums to less than 1 (40: nearly all of it)
        assertThat(total).as("seed=%dL", seed).isLessThan(1.0);
        // -inf is no sink at all, bit for bit
        float[] noSink = withoutSink.clone();
        Numerics.softmax(withoutSink, n, 0.125f, Float.NEGATIVE_INFINITY);
        Numerics.softmax(noSink, n, 0.125f);
        for (int i = 0; i < n; i++) {
            assertThat(Float.floatToRawIntBits(withoutSink[i])).isEqualTo(Float.floatToRawIntBits(noSink[i]));
        }
    }

    private static void reference(float[] x, int n, float scale) {
        reference(x, n, scale, Float.NEGATIVE_INFINITY);
    }

    /**
     * ggml's soft_max, one lane at a time: scale, max, vexp per chunk of 16 summed by reduce16 into a double; a sink
     * (not -inf) joins the max and adds its C-library expf to the double sum.
     */
    private static void reference(float[] x, int n, float scale, float sink) {
        float max = Float.NEGATIVE_INFINITY;
        for (int i = 0; i < n; i++) {
            x[i] *= scale;
            max = Math.max(max, x[i]);
        }
        boolean hasSink = sink != Float.NEGATIVE_INFINITY;
        if (hasSink) {
            max = Math.max(max, sink);
        }
        double sum = 0;
        float[] lanes = new float[16];
        for (int c = 0; c < n; c += 16) {
            for (int l = 0; l < 16; l++) {
                lanes[l] = c + l < n ? GgmlExp.vexp(x[c + l] - max) : 0f;
                if (c + l < n) {
                    x[c + l] = lanes[l];
                }
            }
            sum += GgmlSums.reduce16(lanes, 0);
        }
        if (hasSink) {
            sum += Libm.exp(sink - max);
        }
        float inv = (float) (1.0 / sum);
        for (int i = 0; i < n; i++) {
            x[i] *= inv;
        }
    }
}
