package dev.lazarus.kt.model;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@link GgmlExp} reproduces ggml's AVX-512 {@code ggml_v_expf}. The pinned pairs were produced by that
 * routine on an AVX-512 machine (3.2 million random inputs in [-110, 110] agreed bit for bit when this was
 * written); they are inputs where the correctly rounded exp differs, i.e. where using {@link Math#exp}
 * made the engine's softmax and SiLU round differently from llama-server's.
 */
class GgmlExpTest {

    @ParameterizedTest
    @CsvSource({
        "3d37da49, 3f85e054",
        "bf80a5b7, 3ebb6776",
        "be4aaf7d, 3f52073f",
        "bf7e5eb3, 3ebd8eb6",
        "bf6379f5, 3ed28df9",
        "3db3914f, 3f8bbacc",
    })
    void matchesGgmlsVectorExpBitForBit(String xBits, String ggmlBits) {
        float x = Float.intBitsToFloat(Integer.parseUnsignedInt(xBits, 16));
        float expected = Float.intBitsToFloat(Integer.parseUnsignedInt(ggmlBits, 16));
        assertThat(Float.floatToRawIntBits(GgmlExp.vexp(x))).as("vexp(%s)", x).isEqualTo(Float.floatToRawIntBits(expected));
        assertThat((float) Math.exp(x)).as("the correctly rounded exp differs here").isNotEqualTo(expected);
    }

    @Test
    void staysWithinThreeUlpsOfExpAndSaturatesLikeGgml() {
        long seed = System.nanoTime();
        Random rnd = new Random(seed);
        for (int i = 0; i < 100_000; i++) {
            float x = (rnd.nextFloat() - 0.5f) * 170;
            float exact = (float) Math.exp(x);
            assertThat(GgmlExp.vexp(x)).as("seed=%dL x=%s", seed, x).isCloseTo(exact, org.assertj.core.data.Offset.offset(3f * Math.ulp(exact)));
        }
        assertThat(GgmlExp.vexp(0f)).isEqualTo(1f);
        assertThat(GgmlExp.vexp(Float.NEGATIVE_INFINITY)).isZero();
        assertThat(GgmlExp.vexp(200f)).isInfinite();
    }

    @Test
    void vectorLanesCoverWholeChunksOfSixteenAndTheTailUsesTheLibrary() {
        float x = Float.intBitsToFloat(0x3d37da49);
        assertThat(GgmlExp.exp(x, 15, 20)).isEqualTo(GgmlExp.vexp(x));
        assertThat(GgmlExp.exp(x, 16, 20)).isEqualTo((float) Math.exp(x));
        assertThat(dev.lazarus.kt.tensor.GgmlSums.reduce16(new float[] {1e8f, 1, 1, 1, 1, 1, 1, 1, -1e8f, 1, 1, 1, 1, 1, 1, 1}, 0))
                .as("lanes 0 and 8 meet first, so the ones survive").isEqualTo(14f);
    }
}
