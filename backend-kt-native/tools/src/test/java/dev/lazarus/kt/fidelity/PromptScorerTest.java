package dev.lazarus.kt.fidelity;

import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

/** The arithmetic of one prompt's row: agreement, divergence and |Δ logprob|, on hand-made logits. */
class PromptScorerTest {

    /** Logits over a vocabulary of 4 whose log-softmax is exactly {@code logprobs} (they sum to 1 as probabilities). */
    private static float[] logitsOf(double... probabilities) {
        float[] logits = new float[probabilities.length];
        for (int i = 0; i < logits.length; i++) {
            logits[i] = (float) Math.log(probabilities[i]);
        }
        return logits;
    }

    private static List<TokenLogprob> top(double... idAndProbability) {
        TokenLogprob[] out = new TokenLogprob[idAndProbability.length / 2];
        for (int i = 0; i < out.length; i++) {
            out[i] = new TokenLogprob((int) idAndProbability[2 * i], Math.log(idAndProbability[2 * i + 1]));
        }
        return List.of(out);
    }

    @Test
    void identicalDistributionsAgreeEverywhereWithNoDelta() {
        float[][] logits = {logitsOf(0.1, 0.6, 0.2, 0.1), logitsOf(0.5, 0.1, 0.3, 0.1)};
        OracleContinuation oracle = new OracleContinuation(new int[] {1, 0},
                List.of(top(1, 0.6, 2, 0.2), top(0, 0.5, 2, 0.3)), Set.of());

        PromptFidelity row = PromptScorer.score("p", 3, oracle, logits);

        assertThat(row.agreed()).isEqualTo(2);
        assertThat(row.top1Agreement()).isEqualTo(1.0);
        assertThat(row.firstDivergence()).isEqualTo(PromptFidelity.NONE);
        assertThat(row.comparedLogprobs()).isEqualTo(4);
        assertThat(row.maxDelta()).isLessThan(1e-6); // float logits against double logprobs
        assertThat(row.freeRunningDivergence()).isEqualTo(PromptFidelity.NOT_MEASURED);
    }

    @Test
    void countsDisagreementsAndTheFirstDivergenceAndAveragesDeltasOverCandidates() {
        float[][] logits = {logitsOf(0.1, 0.6, 0.2, 0.1), logitsOf(0.2, 0.1, 0.6, 0.1), logitsOf(0.7, 0.1, 0.1, 0.1)};
        // the oracle chose 1, 0, 0; the engine's argmax is 1, 2, 0: one disagreement, at position 1
        OracleContinuation oracle = new OracleContinuation(new int[] {1, 0, 0},
                List.of(top(1, 0.6), top(0, 0.6), top(0, 0.7)), Set.of());

        PromptFidelity row = PromptScorer.score("p", 3, oracle, logits);

        assertThat(row.agreed()).isEqualTo(2);
        assertThat(row.top1Agreement()).isCloseTo(2 / 3.0, within(1e-12));
        assertThat(row.firstDivergence()).isEqualTo(1);
        double delta = Math.abs(Math.log(0.2) - Math.log(0.6));
        assertThat(row.maxDelta()).isCloseTo(delta, within(1e-6));
        assertThat(row.meanDelta()).isCloseTo(delta / 3, within(1e-6));
    }

    @Test
    void theEnginesArgmaxSkipsTheTokensTheOracleBanned() {
        // token 3 (say EOS) is the engine's most probable, but the oracle ran with ignore_eos: it picked token 1
        float[][] logits = {logitsOf(0.1, 0.3, 0.1, 0.5)};
        OracleContinuation banned = new OracleContinuation(new int[] {1}, List.of(top(3, 0.5, 1, 0.3)), Set.of(3));
        OracleContinuation free = new OracleContinuation(new int[] {1}, List.of(top(3, 0.5, 1, 0.3)), Set.of());

        assertThat(PromptScorer.score("p", 1, banned, logits).agreed()).isEqualTo(1);
        assertThat(PromptScorer.score("p", 1, free, logits).agreed()).isZero();
    }

    @Test
    void positionsWithoutReportedCandidatesCountForAgreementButNotForDeltas() {
        float[][] logits = {logitsOf(0.1, 0.6, 0.2, 0.1), logitsOf(0.1, 0.6, 0.2, 0.1)};
        List<List<TokenLogprob>> top = Arrays.asList(null, top(1, 0.5));
        OracleContinuation oracle = new OracleContinuation(new int[] {1, 1}, top, Set.of());

        PromptFidelity row = PromptScorer.score("p", 1, oracle, logits);

        assertThat(row.agreed()).isEqualTo(2);
        assertThat(row.comparedLogprobs()).isEqualTo(1);
        assertThat(row.maxDelta()).isCloseTo(Math.log(0.6) - Math.log(0.5), within(1e-6));
    }

    @Test
    void twoImpossibleTokensDoNotDiffer() {
        assertThat(PromptScorer.delta(Double.NEGATIVE_INFINITY, Double.NEGATIVE_INFINITY)).isZero();
        assertThat(PromptScorer.delta(-1, Double.NEGATIVE_INFINITY)).isInfinite();
        assertThat(PromptScorer.delta(-1.5, -1.25)).isEqualTo(0.25);
    }

    @Test
    void logitsMustCoverEveryPosition() {
        OracleContinuation oracle = new OracleContinuation(new int[] {1, 0}, Arrays.asList(null, null), Set.of());
        assertThatThrownBy(() -> PromptScorer.score("p", 1, oracle, new float[1][]))
                .hasMessageContaining("1 positions of logits for 2 tokens");
    }

    @Test
    void argmaxTiesGoToTheLowerIdAndLogSoftmaxNormalises() {
        assertThat(LogitMath.argmax(new float[] {1, 3, 3, 2}, Set.of())).isEqualTo(1);
        assertThat(LogitMath.argmax(new float[] {1, 3, 3, 2}, Set.of(1))).isEqualTo(2);
        double[] lp = LogitMath.logSoftmax(new float[] {1000, 1000});
        assertThat(lp[0]).isCloseTo(Math.log(0.5), within(1e-12));
    }
}
