package dev.lazarus.kt.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class ExpertRouterTest {

    @Test
    void softmaxTopKRenormalisedWeightsAreTheSoftmaxOverTheChosen() {
        MoeConfig config = new MoeConfig(4, 2, 8, 0, 0, MoeConfig.Gating.SOFTMAX, true, 0f, 1, 1);
        ExpertRouter.Route route = new ExpertRouter(config, null).route(new float[] {1f, 3f, 0f, 2f});
        assertThat(route.experts()).containsExactly(1, 3);
        double e3 = Math.exp(3);
        double e2 = Math.exp(2);
        assertThat(route.weights()[0]).isCloseTo((float) (e3 / (e3 + e2)), within(1e-6f));
        assertThat(route.weights()[1]).isCloseTo((float) (e2 / (e3 + e2)), within(1e-6f));
    }

    @Test
    void softmaxWithoutRenormalisationKeepsProbabilitiesOverAllExperts() {
        MoeConfig config = new MoeConfig(4, 2, 8, 0, 0, MoeConfig.Gating.SOFTMAX, false, 0f, 1, 1);
        ExpertRouter.Route route = new ExpertRouter(config, null).route(new float[] {1f, 3f, 0f, 2f});
        double sum = Math.exp(1) + Math.exp(3) + Math.exp(0) + Math.exp(2);
        assertThat(route.weights()[0]).isCloseTo((float) (Math.exp(3) / sum), within(1e-6f));
    }

    @Test
    void sigmoidBiasChoosesButDoesNotWeigh() {
        MoeConfig config = new MoeConfig(4, 2, 8, 0, 0, MoeConfig.Gating.SIGMOID, false, 2f, 1, 1);
        float[] bias = {0f, 0f, 5f, 0f};
        ExpertRouter.Route route = new ExpertRouter(config, bias).route(new float[] {2f, 1f, -1f, 0f});
        // expert 2 has the lowest logit but the bias makes it the first choice; its weight is its own sigmoid
        assertThat(route.experts()).containsExactly(2, 0);
        assertThat(route.weights()[0]).isCloseTo(2f * sigmoid(-1f), within(1e-6f));
        assertThat(route.weights()[1]).isCloseTo(2f * sigmoid(2f), within(1e-6f));
    }

    @Test
    void groupLimitedRoutingOnlyChoosesFromTheBestGroupsThenNormalisesAndScales() {
        // 8 experts in 4 groups of 2; groups scored by the sum of their two members.
        MoeConfig config = new MoeConfig(8, 2, 8, 0, 0, MoeConfig.Gating.SIGMOID, true, 2.5f, 4, 2);
        float[] logits = {
            4f, -4f,   // group 0: one strong expert, weak partner → score ≈ 0.98 + 0.02 = 1.0
            1f, 1f,    // group 1: ≈ 0.73 + 0.73 = 1.46
            0.5f, 0.5f, // group 2: ≈ 1.24
            -1f, -1f,  // group 3: ≈ 0.54
        };
        ExpertRouter.Route route = new ExpertRouter(config, null).route(logits);
        // Without groups expert 0 (the single best) would win; groups 1 and 2 are kept instead.
        assertThat(route.experts()).containsExactly(2, 3);
        assertThat(route.weights()[0]).isCloseTo(2.5f * 0.5f, within(1e-6f));
        assertThat(route.weights()[1]).isCloseTo(2.5f * 0.5f, within(1e-6f));
    }

    @Test
    void softmaxWeightGatingChoosesByBiasedLogitsAndSoftmaxesOnlyTheChosen() {
        // gpt-oss: logits + router bias, top-k on the raw values, softmax over the k chosen, no renormalisation
        MoeConfig config = new MoeConfig(4, 2, 8, 0, 0, MoeConfig.Gating.SOFTMAX_WEIGHT, false, 0f, 1, 1);
        float[] logitBias = {0f, 0f, 3f, 0f};
        ExpertRouter.Route route = new ExpertRouter(config, logitBias, null).route(new float[] {1f, 3f, 0.5f, 2f});
        // biased logits 1, 3, 3.5, 2: experts 2 then 1; weights softmax(3.5, 3), summing to 1 among the chosen
        assertThat(route.experts()).containsExactly(2, 1);
        double a = Math.exp(3.5 - 3.5), b = Math.exp(3 - 3.5);
        assertThat(route.weights()[0]).isCloseTo((float) (a / (a + b)), within(1e-6f));
        assertThat(route.weights()[1]).isCloseTo((float) (b / (a + b)), within(1e-6f));
    }

    @Test
    void aRouterBiasOfTheWrongLengthIsAFormatError() {
        MoeConfig config = new MoeConfig(4, 2, 8, 0, 0, MoeConfig.Gating.SOFTMAX_WEIGHT, false, 0f, 1, 1);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new ExpertRouter(config, new float[3], null))
                .isInstanceOf(ModelFormatException.class).hasMessageContaining("ffn_gate_inp.bias has 3 values");
    }

    @Test
    void topKOrdersByValueAndBreaksTiesByIndex() {
        assertThat(ExpertRouter.topK(new float[] {1f, 5f, 5f, 3f}, 3)).containsExactly(1, 2, 3);
    }

    private static float sigmoid(float x) {
        return 1f / (1f + (float) Math.exp(-x));
    }
}
