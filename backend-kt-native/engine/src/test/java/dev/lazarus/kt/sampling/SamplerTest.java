package dev.lazarus.kt.sampling;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class SamplerTest {

    private static SamplingParams params(float temperature, int topK, float topP, float minP, long seed) {
        return new SamplingParams(temperature, topK, topP, minP, seed, Penalties.NONE, Map.of(), false, 0, -1, List.of());
    }

    /** Logits whose softmax at temperature 1 is exactly the given probabilities. */
    private static float[] logitsOf(double... probs) {
        float[] logits = new float[probs.length];
        for (int i = 0; i < probs.length; i++) {
            logits[i] = (float) Math.log(probs[i]);
        }
        return logits;
    }

    private static Set<Integer> drawn(SamplingParams p, float[] logits, int draws) {
        Sampler sampler = new Sampler(p, logits.length, 64);
        Set<Integer> seen = new HashSet<>();
        for (int i = 0; i < draws; i++) {
            seen.add(sampler.sample(logits.clone()));
        }
        return seen;
    }

    @Test
    void greedyTakesTheLargestLogitAndLogitBiasCanChangeIt() {
        float[] logits = {0.1f, 2.5f, 1.0f};
        assertThat(new Sampler(SamplingParams.greedy(10), 3, 64).sample(logits.clone())).isEqualTo(1);
        SamplingParams biased = new SamplingParams(0f, 40, 1f, 0f, 1, Penalties.NONE, Map.of(2, 5f), false, 0, -1, List.of());
        assertThat(new Sampler(biased, 3, 64).sample(logits.clone())).isEqualTo(2);
    }

    @Test
    void theSameSeedReplaysTheSameChoices() {
        float[] flat = new float[16];
        int[] first = new int[64];
        int[] second = new int[64];
        int[] other = new int[64];
        Sampler a = new Sampler(params(1f, 0, 1f, 0f, 42), 16, 64);
        Sampler b = new Sampler(params(1f, 0, 1f, 0f, 42), 16, 64);
        Sampler c = new Sampler(params(1f, 0, 1f, 0f, 43), 16, 64);
        for (int i = 0; i < 64; i++) {
            first[i] = a.sample(flat.clone());
            second[i] = b.sample(flat.clone());
            other[i] = c.sample(flat.clone());
        }
        assertThat(second).isEqualTo(first);
        assertThat(other).isNotEqualTo(first);
    }

    @Test
    void truncationKeepsOnlyTheAllowedTokens() {
        float[] logits = logitsOf(0.5, 0.3, 0.15, 0.05);
        assertThat(drawn(params(1f, 1, 1f, 0f, 1), logits, 200)).containsExactly(0);
        assertThat(drawn(params(1f, 2, 1f, 0f, 1), logits, 400)).containsExactlyInAnyOrder(0, 1);
        assertThat(drawn(params(1f, 0, 0.5f, 0f, 1), logits, 200)).containsExactly(0);
        assertThat(drawn(params(1f, 0, 0.75f, 0f, 1), logits, 400)).containsExactlyInAnyOrder(0, 1);
        // min_p 0.5: at least half as likely as the best (0.25): tokens 0 and 1
        assertThat(drawn(params(1f, 0, 1f, 0.5f, 1), logits, 400)).containsExactlyInAnyOrder(0, 1);
        assertThat(drawn(params(1f, 0, 1f, 0f, 1), logits, 2000)).containsExactlyInAnyOrder(0, 1, 2, 3);
    }

    @Test
    void lowTemperatureSharpensAndHighTemperatureFlattens() {
        float[] logits = logitsOf(0.6, 0.4);
        int zerosCold = count(params(0.05f, 0, 1f, 0f, 7), logits, 1000);
        int zerosHot = count(params(2f, 0, 1f, 0f, 7), logits, 1000);
        assertThat(zerosCold).isGreaterThan(990);
        assertThat(zerosHot).isBetween(450, 650);
    }

    private static int count(SamplingParams p, float[] logits, int draws) {
        Sampler sampler = new Sampler(p, logits.length, 64);
        int zeros = 0;
        for (int i = 0; i < draws; i++) {
            zeros += sampler.sample(logits.clone()) == 0 ? 1 : 0;
        }
        return zeros;
    }

    private static SamplingParams greedyWith(Penalties penalties) {
        return new SamplingParams(0f, 0, 1f, 0f, 1, penalties, Map.of(), false, 0, -1, List.of());
    }

    private static Sampler accepting(SamplingParams p, int vocab, int context, int... tokens) {
        Sampler sampler = new Sampler(p, vocab, context);
        for (int t : tokens) {
            sampler.accept(t);
        }
        return sampler;
    }

    @Test
    void penaltiesLowerTokensInTheWindow() {
        float[] logits = {5f, 4.5f, 3f};
        float[] f = logits.clone();
        assertThat(accepting(greedyWith(new Penalties(64, 1f, 0.5f, 0f)), 3, 64, 0, 0, 0, 1).sample(f)).isEqualTo(1);
        assertThat(f).containsExactly(3.5f, 4f, 3f);
        float[] p = logits.clone();
        assertThat(accepting(greedyWith(new Penalties(64, 1f, 0f, 2.5f)), 3, 64, 0, 0, 0, 1).sample(p)).isEqualTo(2);
        assertThat(p).containsExactly(2.5f, 2f, 3f);
    }

    @Test
    void repeatPenaltyDividesPositiveAndMultipliesNegativeLogits() {
        float[] logits = {4f, -1f, 3f};
        accepting(greedyWith(new Penalties(64, 2f, 0f, 0f)), 3, 64, 0, 1, 1).sample(logits);
        assertThat(logits).containsExactly(2f, -2f, 3f);
    }

    @Test
    void onlyTheLastNTokensCount() {
        // window 3: of 0 0 0 1 2 only "0 1 2" remain, each once
        float[] logits = {5f, 5f, 5f, 5f};
        accepting(greedyWith(new Penalties(3, 1f, 1f, 0f)), 4, 64, 0, 0, 0, 1, 2).sample(logits);
        assertThat(logits).containsExactly(4f, 4f, 4f, 5f);
        // -1: the context size (here 100) holds all five
        float[] all = {5f, 5f, 5f, 5f};
        accepting(greedyWith(new Penalties(-1, 1f, 1f, 0f)), 4, 100, 0, 0, 0, 1, 2).sample(all);
        assertThat(all).containsExactly(2f, 4f, 4f, 5f);
        // 0: off
        float[] none = {5f, 5f, 5f, 5f};
        accepting(greedyWith(new Penalties(0, 1f, 1f, 0f)), 4, 100, 0, 0, 0, 1, 2).sample(none);
        assertThat(none).containsExactly(5f, 5f, 5f, 5f);
    }

    @Test
    void aLongWindowGrowsAndSlidesCorrectly() {
        int vocab = 50;
        Sampler sampler = new Sampler(greedyWith(new Penalties(37, 1f, 1f, 0f)), vocab, 1000);
        java.util.Random random = new java.util.Random(3);
        java.util.ArrayDeque<Integer> expectedWindow = new java.util.ArrayDeque<>();
        for (int i = 0; i < 500; i++) {
            int token = random.nextInt(vocab);
            sampler.accept(token);
            expectedWindow.addLast(token);
            if (expectedWindow.size() > 37) {
                expectedWindow.removeFirst();
            }
            if (i % 23 == 0) {
                float[] logits = new float[vocab];
                sampler.sample(logits);
                for (int t = 0; t < vocab; t++) {
                    int id = t;
                    long count = expectedWindow.stream().filter(x -> x == id).count();
                    assertThat(logits[t]).as("token %d after %d accepted", t, i + 1).isEqualTo(-(float) count);
                }
            }
        }
    }

    @Test
    void logprobsAreTheLogSoftmaxOfTheRawLogits() {
        float[] logits = {1f, 3f, 2f, 3f};
        SamplingParams p = new SamplingParams(0.1f, 1, 1f, 0f, 1, Penalties.NONE, Map.of(0, 100f), true, 3, -1, List.of());
        Sampler.Sampled sampled = new Sampler(p, 4, 64).next(logits);
        assertThat(sampled.token()).isZero(); // the bias made 0 the only choice ...
        double logZ = Math.log(Math.exp(1) + 2 * Math.exp(3) + Math.exp(2));
        TokenLogprobs lp = sampled.logprobs();
        assertThat(lp.token()).isZero();
        assertThat((double) lp.logprob()).isCloseTo(1 - logZ, within(1e-5)); // ... but its logprob is unbiased
        assertThat(lp.top()).extracting(TokenLogprobs.Alternative::token).containsExactly(1, 3, 2);
        assertThat((double) lp.top().get(0).logprob()).isCloseTo(3 - logZ, within(1e-5));
        SamplingParams none = SamplingParams.greedy(1);
        assertThat(new Sampler(none, 4, 64).next(new float[] {1, 2, 3, 4}).logprobs()).isNull();
    }
}
