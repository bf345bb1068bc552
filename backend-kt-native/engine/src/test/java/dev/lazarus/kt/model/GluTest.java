package dev.lazarus.kt.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

/** gpt-oss's clamped SwiGLU and the expert biases, against the formula llama.cpp's swiglu_oai states. */
class GluTest {

    private static double oai(double gate, double up) {
        double x = Math.min(gate, 7.0);
        double y = Math.max(-7.0, Math.min(up, 7.0));
        return x / (1 + Math.exp(-1.702 * x)) * (y + 1);
    }

    @Test
    void swigluOaiClampsTheGateAboveAndTheUpBothWaysThenAddsOneToUp() {
        Glu glu = new Glu(Glu.Kind.SWIGLU_OAI, null, null, null);
        // tolerance: f32 arithmetic and the C library's expf against double, a few ulp of values below 50
        assertThat(glu.hidden(10f, -9f, 0, 1)).isCloseTo((float) oai(10, -9), within(1e-5f));
        assertThat(glu.hidden(10f, -9f, 0, 1)).isCloseTo(glu.hidden(7f, -7f, 0, 1), within(0f));
        assertThat(glu.hidden(-2f, 0.5f, 0, 1)).isCloseTo((float) oai(-2, 0.5), within(1e-6f));
        assertThat(glu.hidden(3f, 20f, 0, 1)).isCloseTo((float) oai(3, 7), within(1e-5f));
        // unlike SiLU, a negative gate is not clamped from below: -20 gives a tiny negative, not -7's value
        float tiny = (float) oai(-20, 1);
        assertThat(tiny).isNegative();
        assertThat(glu.hidden(-20f, 1f, 0, 1)).isCloseTo(tiny, within(Math.abs(tiny) * 1e-5f));
    }

    @Test
    void biasesAreAddedToGateAndUpBeforeTheActivationAndToTheOutput() {
        Glu biased = new Glu(Glu.Kind.SWIGLU_OAI, new float[] {0f, 1.5f}, new float[] {0f, -0.25f}, new float[] {2f, 3f});
        Glu plain = new Glu(Glu.Kind.SWIGLU_OAI, null, null, null);
        assertThat(biased.hidden(0.5f, 1f, 1, 2)).isEqualTo(plain.hidden(2f, 0.75f, 1, 2));
        float[] out = {1f, 1f};
        biased.addDownBias(out, 1, 2);
        assertThat(out).containsExactly(1f, 4f);
        assertThat(biased.isPlain()).isFalse();
        assertThat(Glu.SWIGLU.isPlain()).isTrue();
    }

    @Test
    void plainSwigluIsSiluOfTheGateTimesUp() {
        assertThat(Glu.SWIGLU.hidden(1.25f, -2f, 0, 1)).isEqualTo(Numerics.silu(1.25f, 0, 1) * -2f);
    }
}
