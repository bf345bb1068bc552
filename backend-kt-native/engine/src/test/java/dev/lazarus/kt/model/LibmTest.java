package dev.lazarus.kt.model;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The batched exponential (flash attention's one-row order takes one per cached position) against the C library's
 * {@code expf} called per value: on AVX-512 hosts the batch runs glibc's algorithm in vector lanes, which must give
 * the same bits, or flash-attention decoding would drift from llama-server's.
 */
class LibmTest {

    @Test
    void theBatchedExpfIsTheCLibrarysExpfValueByValue() {
        long seed = System.nanoTime();
        Random rnd = new Random(seed);
        int n = 1 << 21;
        float[] x = new float[n];
        for (int i = 0; i < n; i++) {
            x[i] = switch (i % 4) {
                // every bit pattern from -0 down past the underflow thresholds, a stride apart
                case 0 -> Float.intBitsToFloat(0x80000000 + (int) ((long) (i / 4) * 0x42D00000L / (n / 4)));
                case 1 -> -rnd.nextFloat() * 20f; // softmax weights: score - max
                case 2 -> -88f - rnd.nextFloat() * 17f; // the underflow paths, -88 to -105
                default -> rnd.nextInt(64) == 0 ? rnd.nextFloat() * 90f : -rnd.nextFloat(); // a positive lane now and then
            };
        }
        x[5] = Float.NEGATIVE_INFINITY;
        x[9] = -0f;
        x[13] = 0f;
        x[17] = Float.NaN;
        x[21] = -0x1.9fe368p6f;
        x[25] = -0x1.9d1d9ep6f;
        x[29] = 88.72f;
        x[33] = 89f;
        x[37] = -0x1.f8cbb2p+5f; // where glibc's contracted fma decides the last bit
        float[] y = new float[n];
        Libm.exp(x, y, n);
        for (int i = 0; i < n; i++) {
            float expected = Libm.exp(x[i]);
            if (Float.floatToRawIntBits(y[i]) != Float.floatToRawIntBits(expected)) {
                assertThat(y[i]).as("seed=%dL x=%a", seed, x[i]).isEqualTo(expected);
            }
        }
    }
}
