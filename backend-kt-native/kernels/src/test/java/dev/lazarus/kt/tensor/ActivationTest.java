package dev.lazarus.kt.tensor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lazarus.kt.matrix.KernelEquivalenceTest;
import org.junit.jupiter.api.Test;

class ActivationTest {

    @Test
    void q8_0ScaleIsF16AndValuesRoundToNearestEven() {
        float[] x = new float[32];
        x[0] = -127; // amax 127: d = 1, id = 1
        x[1] = 2.5f;
        x[2] = 3.5f;
        x[3] = -2.5f;
        x[4] = 0.4f;
        Activation a = Activation.allocate(VecDotType.Q8_0, 32).set(x);
        assertThat(a.scales[0]).isEqualTo(1f);
        assertThat(a.values).startsWith(-127f, 2f, 4f, -2f, 0f);

        x[0] = 0.1f; // d = 0.1/127, not representable in f16: stored rounded
        a.set(x);
        assertThat(a.scales[0]).isEqualTo(FloatOps.roundF16(3.5f / 127)).isNotEqualTo(3.5f / 127);
    }

    @Test
    void q8_kMapsTheLargestMagnitudeToMinus127AndKeepsGroupSums() {
        float[] x = new float[256];
        for (int i = 0; i < 256; i++) {
            x[i] = (i % 16) - 4;
        }
        x[7] = 12.7f; // largest magnitude, positive: iscale = -127/12.7 = -10
        Activation a = Activation.allocate(VecDotType.Q8_K, 256).set(x);
        assertThat(a.scales[0]).isCloseTo(-0.1f, org.assertj.core.data.Offset.offset(1e-7f));
        assertThat(a.values[7]).isEqualTo(-127f);
        assertThat(a.values[0]).isEqualTo(40f);  // -4 · -10
        assertThat(a.values[5]).isEqualTo(-10f); // 1 · -10
        int sum = 0;
        for (int i = 0; i < 16; i++) {
            sum += (int) a.values[i];
        }
        assertThat(a.bsums[0]).isEqualTo(sum);
        assertThat(a.bsums[1]).isEqualTo(-10 * (0 + 1 + 2 + 3 + 4 + 5 + 6 + 7 + 8 + 9 + 10 + 11 - 4 - 3 - 2 - 1));
    }

    /** A kernel's form as the quant packages define theirs: each block's values in reverse. */
    private static ActivationForm<float[]> reversed(VecDotType type) {
        return new ActivationForm<>(type) {
            @Override
            protected float[] allocate(int capacity) {
                return new float[capacity];
            }

            @Override
            protected void write(Activation x, int b, float[] into) {
                int size = type.blockSize(), o = size * b;
                for (int i = 0; i < size; i++) {
                    into[o + i] = x.values[o + size - 1 - i];
                }
            }
        };
    }

    /**
     * A kernel's form is written on first read after each set: a re-set activation, read or not in between, gives the
     * form of its new values, a zero block's form is zeros; its copy is allocated once and reused across sets.
     */
    @Test
    void formsFollowTheLastSetInOneCopy() {
        java.util.Random rnd = new java.util.Random(7);
        float[] x1 = KernelEquivalenceTest.gaussian(rnd, 512), x2 = KernelEquivalenceTest.gaussian(rnd, 512);
        java.util.Arrays.fill(x2, 256, 512, 0f);
        ActivationForm<float[]> q8k = reversed(VecDotType.Q8_K), q80 = reversed(VecDotType.Q8_0);
        Activation fresh = Activation.allocate(VecDotType.Q8_K, 512).set(x2);
        Activation reused = Activation.allocate(VecDotType.Q8_K, 512).set(x1);
        float[] copy = reused.form(q8k);
        assertThat(copy).isNotEqualTo(fresh.form(q8k)).startsWith(reused.values[255], reused.values[254]);
        reused.set(x1).set(x2);
        assertThat(reused.form(q8k)).isSameAs(copy).isEqualTo(fresh.form(q8k));
        assertThat(java.util.Arrays.copyOfRange(copy, 256, 512)).containsOnly(0f);
        Activation a80 = Activation.allocate(VecDotType.Q8_0, 64).set(java.util.Arrays.copyOf(x1, 64));
        float[] before = a80.form(q80).clone();
        a80.set(java.util.Arrays.copyOf(x2, 64));
        assertThat(a80.form(q80)).isNotEqualTo(before)
                .isEqualTo(Activation.allocate(VecDotType.Q8_0, 64).set(java.util.Arrays.copyOf(x2, 64)).form(q80));
    }

    @Test
    void rejectsAFormOfAnotherType() {
        assertThatThrownBy(() -> Activation.allocate(VecDotType.Q8_0, 32).form(reversed(VecDotType.Q8_K)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("Q8_K");
    }

    @Test
    void zeroBlockQuantizesToZeros() {
        Activation a = Activation.allocate(VecDotType.Q8_K, 256).set(new float[256]);
        assertThat(a.scales[0]).isZero();
        assertThat(a.bsums).containsOnly(0);
    }

    @Test
    void floatFormsRoundToTheirWidth() {
        float x = 1.0009765625f + 0x1p-12f; // between f16 neighbours 1.0009765625 and 1.001953125, nearer the first
        Activation f16 = Activation.allocate(VecDotType.F16, 8).set(new float[] {x, 0, 0, 0, 0, 0, 0, 0});
        assertThat(f16.values[0]).isEqualTo(1.0009765625f);
        Activation bf16 = Activation.allocate(VecDotType.BF16, 8).set(new float[] {1.00390625f, 0, 0, 0, 0, 0, 0, 0});
        assertThat(bf16.values[0]).isEqualTo(1f); // tie to even
    }

    @Test
    void rejectsLengthsThatAreNotWholeBlocks() {
        assertThatThrownBy(() -> Activation.allocate(VecDotType.Q8_K, 256).set(new float[128]))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("Q8_K");
    }
}
