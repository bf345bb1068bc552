package dev.lazarus.kt.tensor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.lazarus.kt.matrix.KernelEquivalenceTest;
import java.util.Random;
import org.junit.jupiter.api.Test;

class FloatOpsTest {

    private final long seed = System.nanoTime();
    private final Random rnd = new Random(seed);

    @Test
    void vectorOpsMatchScalarLoopsOnOddLengths() {
        int n = 1 + rnd.nextInt(100);
        float[] a = KernelEquivalenceTest.gaussian(rnd, n), b = KernelEquivalenceTest.gaussian(rnd, n);
        double dot = 0, magnitude = 0;
        for (int i = 0; i < n; i++) {
            dot += a[i] * b[i];
            magnitude += Math.abs(a[i] * b[i]);
        }
        assertThat((double) FloatOps.dot(a, b, n)).as("seed %dL", seed).isCloseTo(dot, within(1e-5 * magnitude + 1e-30));

        float[] y = b.clone();
        FloatOps.axpy(0.5f, a, 0, y, 0, n);
        float[] sum = new float[n], prod = new float[n];
        FloatOps.add(a, b, sum, n);
        FloatOps.mul(a, b, prod, n);
        for (int i = 0; i < n; i++) {
            assertThat(y[i]).as("seed %dL", seed).isCloseTo(b[i] + 0.5f * a[i], within(1e-5f * (Math.abs(b[i]) + Math.abs(a[i]))));
            assertThat(sum[i]).isEqualTo(a[i] + b[i]);
            assertThat(prod[i]).isEqualTo(a[i] * b[i]);
        }
    }

    @Test
    void rmsnormGivesUnitRootMeanSquareTimesWeight() {
        int n = 8 + rnd.nextInt(100);
        float[] x = KernelEquivalenceTest.gaussian(rnd, n), w = new float[n], out = new float[n];
        java.util.Arrays.fill(w, 2f);
        FloatOps.rmsnorm(x, w, out, n, 1e-6f);
        double ms = 0, msIn = 0;
        for (int i = 0; i < n; i++) {
            ms += out[i] * out[i];
            msIn += x[i] * x[i];
        }
        // eps counts against a small input (gaussian's scale can be e^-3): the root mean square is 2·√(ms/(ms+eps))
        double expected = 2.0 * Math.sqrt(msIn / n / (msIn / n + 1e-6));
        assertThat(Math.sqrt(ms / n)).as("seed %dL", seed).isCloseTo(expected, within(1e-4));
        FloatOps.rmsnorm(x, null, x, n, 1e-6f);
        assertThat(x[0] * 2).isCloseTo(out[0], within(1e-5f * Math.abs(out[0])));
    }

    @Test
    void softmaxIsANormalisedExponential() {
        float[] x = {0, 0, 1000, 1000, 999, 5};
        FloatOps.softmax(x, 1, 4); // x[1..4]
        assertThat(x[0]).isZero();
        assertThat(x[5]).isEqualTo(5f);
        assertThat(x[1]).isZero();
        assertThat(x[2]).isEqualTo(x[3]);
        assertThat(x[1] + x[2] + x[3] + x[4]).isCloseTo(1f, within(1e-6f));
        assertThat(x[4] / x[2]).isCloseTo((float) Math.exp(-1), within(1e-6f));
    }

    @Test
    void siluAndSwiglu() {
        assertThat(FloatOps.silu(0)).isZero();
        assertThat(FloatOps.silu(1)).isCloseTo(0.7310586f, within(1e-6f));
        float[] gate = {1, -1}, up = {2, 3};
        FloatOps.swiglu(gate, up, 2);
        assertThat(gate[0]).isCloseTo(2 * 0.7310586f, within(1e-6f));
        assertThat(gate[1]).isCloseTo(3 * -0.26894143f, within(1e-6f));
    }

    @Test
    void roundingHelpers() {
        assertThat(FloatOps.roundF16(1 + 0x1p-11f)).isEqualTo(1f); // tie to even
        assertThat(FloatOps.roundF16(1 + 0x1p-11f + 0x1p-20f)).isEqualTo(1 + 0x1p-10f);
        assertThat(FloatOps.roundBf16(1 + 0x1p-8f)).isEqualTo(1f);
        float[] v = {1 + 0x1p-11f + 0x1p-20f};
        FloatOps.roundF16(v, 0, 1);
        assertThat(v[0]).isEqualTo(1 + 0x1p-10f);
    }
}
