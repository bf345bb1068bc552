package dev.lazarus.kt.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RopeTest {

    // dims 4, base 10000: pair 0 turns by pos rad, pair 1 by pos * 10000^(-1/2) = pos * 0.01 rad

    @Test
    void normalRopeRotatesAdjacentPairs() {
        Rope rope = new Rope(RopeConfig.plain(RopeStyle.NORMAL, 4, 10000f, 64));
        float[] x = {1, 0, 0, 1};
        rope.rotate(x, 0, rope.table(1));
        assertThat(x[0]).isCloseTo((float) Math.cos(1), within(1e-6f));
        assertThat(x[1]).isCloseTo((float) Math.sin(1), within(1e-6f));
        assertThat(x[2]).isCloseTo((float) -Math.sin(0.01), within(1e-6f));
        assertThat(x[3]).isCloseTo((float) Math.cos(0.01), within(1e-6f));
    }

    @Test
    void neoxRopeRotatesHalves() {
        Rope rope = new Rope(RopeConfig.plain(RopeStyle.NEOX, 4, 10000f, 64));
        float[] x = {1, 0, 0, 1, 7};
        rope.rotate(x, 0, rope.table(1));
        // pairs are (x0, x2) at angle 1 and (x1, x3) at angle 0.01
        assertThat(x[0]).isCloseTo((float) Math.cos(1), within(1e-6f));
        assertThat(x[2]).isCloseTo((float) Math.sin(1), within(1e-6f));
        assertThat(x[1]).isCloseTo((float) -Math.sin(0.01), within(1e-6f));
        assertThat(x[3]).isCloseTo((float) Math.cos(0.01), within(1e-6f));
        assertThat(x[4]).as("beyond the rotated dimensions").isEqualTo(7f);
    }

    @Test
    void positionZeroIsIdentity() {
        Rope rope = new Rope(RopeConfig.plain(RopeStyle.NORMAL, 4, 10000f, 64));
        float[] x = {0.5f, -2f, 3f, 4f};
        rope.rotate(x, 0, rope.table(0));
        assertThat(x).containsExactly(0.5f, -2f, 3f, 4f);
    }

    @Test
    void yarnExtrapolatesFastPairsInterpolatesSlowOnesAndScalesMagnitude() {
        // factor 4 (freq scale 1/4), original context 64: the ramp's corners are dims 0 and 1,
        // so pair 0 keeps its angle (extrapolation) and pair 1 is interpolated (angle / 4).
        Map<String, Object> md = new HashMap<>(Map.of(
                "general.architecture", "qwen3",
                "qwen3.rope.dimension_count", 4,
                "qwen3.rope.freq_base", 10000f,
                "qwen3.rope.scaling.type", "yarn",
                "qwen3.rope.scaling.factor", 4f,
                "qwen3.rope.scaling.original_context_length", 64));
        RopeConfig config = RopeConfig.fromMetadata(Metadata.of(md), Architecture.QWEN3, 4, 4096);
        Rope rope = new Rope(config);
        float[] table = rope.table(2);
        float magnitude = 1f + 0.1f * (float) Math.log(4);
        assertThat(table[0]).isCloseTo((float) Math.cos(2) * magnitude, within(1e-5f));
        assertThat(table[1]).isCloseTo((float) Math.sin(2) * magnitude, within(1e-5f));
        assertThat(table[2]).isCloseTo((float) Math.cos(0.005) * magnitude, within(1e-5f));
        assertThat(table[3]).isCloseTo((float) Math.sin(0.005) * magnitude, within(1e-5f));
    }

    @Test
    void deepseekYarnKeepsRopeUnscaledAndMovesTheCorrectionIntoTheScoreScale() {
        Map<String, Object> md = new HashMap<>(Map.of(
                "general.architecture", "deepseek2",
                "deepseek2.rope.dimension_count", 64,
                "deepseek2.rope.scaling.type", "yarn",
                "deepseek2.rope.scaling.factor", 40f,
                "deepseek2.rope.scaling.original_context_length", 4096,
                "deepseek2.rope.scaling.yarn_log_multiplier", 0.0707f));
        RopeConfig config = RopeConfig.fromMetadata(Metadata.of(md), Architecture.DEEPSEEK2, 64, 163840);
        float[] table = new Rope(config).table(0);
        assertThat(table[0]).as("cos 0 times the net rope magnitude").isCloseTo(1f, within(1e-5f));
        double mscale = 1 + 0.0707 * Math.log(40);
        assertThat(config.mlaScoreScale(192)).isCloseTo((float) (mscale * mscale / Math.sqrt(192)), within(1e-5f));
    }

    /**
     * The angles go through the C library's sinf/cosf, as ggml's do: glibc's are within about half an ulp but
     * not correctly rounded, and at position 4, pair 9 of a 64-dimension rope with base 10000 its sinf is one
     * ulp above the correctly rounded value that {@code (float) Math.sin} gives (this test runs where
     * llama-server does, on Linux with glibc).
     */
    @Test
    void anglesComeFromTheCLibrarysSinfAndCosf() {
        Rope rope = new Rope(RopeConfig.plain(RopeStyle.NORMAL, 64, 10000f, 2048));
        float[] table = rope.table(4);
        float angle = 4;
        for (int pair = 0; pair < 9; pair++) {
            angle *= Libm.pow(10000f, -2.0f / 64);
        }
        assertThat(Float.floatToRawIntBits(table[19])).as("sinf at angle %s", angle).isEqualTo(0x3e974921);
        assertThat(Float.floatToRawIntBits((float) Math.sin(angle))).as("the correctly rounded sine").isEqualTo(0x3e974920);
        assertThat(table[18]).isEqualTo(Libm.cos(angle));
    }

    @Test
    void imropeLeavesTheExtraSectionsPairsOfATextTokenUnrotated() {
        // 16 pairs in sections [6, 6, 4, 0]: time takes sectors 0,3,..,15, height 1,4,..,16, width 2,5,8,11 (below
        // 3 * 4); sector 14 falls to the extra section, whose position is 0 for text
        RopeConfig plain = RopeConfig.plain(RopeStyle.NEOX, 32, 10_000_000f, 4096);
        RopeConfig imrope = new RopeConfig(RopeStyle.NEOX, 32, 10_000_000f, 1f, 0f, 1f, 32f, 1f, 4096, 0f,
                new int[] {6, 6, 4, 0});
        float[] neox = new Rope(plain).table(100);
        float[] sections = new Rope(imrope).table(100);
        for (int pair = 0; pair < 16; pair++) {
            if (pair == 14) {
                assertThat(imrope.extraSection(pair)).isTrue();
                assertThat(new float[] {sections[2 * pair], sections[2 * pair + 1]}).containsExactly(1f, 0f);
            } else {
                assertThat(imrope.extraSection(pair)).as("pair %d", pair).isFalse();
                assertThat(new float[] {sections[2 * pair], sections[2 * pair + 1]}).as("pair %d", pair)
                        .containsExactly(neox[2 * pair], neox[2 * pair + 1]);
            }
        }
        // Qwen3.5's own sections cover every pair of its 64 rotated dimensions
        RopeConfig real = new RopeConfig(RopeStyle.NEOX, 64, 10_000_000f, 1f, 0f, 1f, 32f, 1f, 4096, 0f,
                new int[] {11, 11, 10, 0});
        for (int pair = 0; pair < 32; pair++) {
            assertThat(real.extraSection(pair)).as("pair %d", pair).isFalse();
        }
    }
}
