package dev.lazarus.gateway.policy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.gateway.policy.gate.BackendFigures;
import dev.lazarus.gateway.policy.gate.GateDecision;
import dev.lazarus.gateway.policy.gate.GateThresholds;
import dev.lazarus.gateway.policy.gate.GateThresholds.AgreementThresholds;
import dev.lazarus.gateway.policy.gate.GateThresholds.SpeedThresholds;
import dev.lazarus.gateway.policy.gate.OracleAgreement;
import dev.lazarus.gateway.policy.gate.RunResult;
import dev.lazarus.gateway.policy.gate.Stat;
import dev.lazarus.gateway.policy.gate.Verdict;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Verdicts from fixture figures, at and around every threshold: speed relative to the oracle when
 * the job measured one, absolute only when it could not, and agreement with the oracle.
 */
class GateDecisionTest {

    private static final GateThresholds RUNBOOK = GateThresholds.defaults();
    private static final OracleAgreement AGREES = agreement(48, 48, 0.01, 0.05, null);

    // ---- speed with an oracle measured in the job: the ratios decide ----

    @Test
    void aCandidateFourTimesSlowerThanTheOracleIsNoGoHoweverManyTokensPerSecondItMakes() {
        // issue 11: 442.8 tok/s against an oracle at 1990.6 was GO because it beat 12 tok/s
        GateDecision d = decide(figures("kt", 442.8, 50, 9, 9), figures("llama", 1990.6, 20, 9, 9), AGREES, RUNBOOK);
        assertThat(d.verdict()).isEqualTo(Verdict.NO_GO);
        assertThat(d.reasons()).containsExactly("442.8 tok/s is 0.22x the oracle's 1990.6 tok/s, under the 0.75x"
                + " NO-GO ratio (relative rule: the oracle was measured in this job)");
    }

    @Test
    void atLeastTheGoRatioIsGoAndTheReasonNamesTheRelativeRule() {
        GateDecision d = decide(figures("kt", 15, 800, 9, 9), figures("llama", 12, 700, 9, 9), AGREES, RUNBOOK);
        assertThat(d.verdict()).isEqualTo(Verdict.GO);
        assertThat(d.reasons().getFirst()).isEqualTo("15.0 tok/s is 1.25x the oracle's 12.0 tok/s, at least the"
                + " 1.10x GO ratio (relative rule: the oracle was measured in this job)");
        // exactly 1.1x is enough: "at least"
        assertThat(decide(figures("kt", 11, 800, 9, 9), figures("llama", 10, 700, 9, 9), AGREES, RUNBOOK).verdict())
                .isEqualTo(Verdict.GO);
        // 7 tok/s is under the absolute 8, but 1.4x an oracle at 5: the oracle is what it would replace
        assertThat(decide(figures("kt", 7, 900, 9, 9), figures("llama", 5, 900, 9, 9), AGREES, RUNBOOK).verdict())
                .isEqualTo(Verdict.GO);
    }

    @Test
    void betweenTheHoldAndGoRatiosIsHoldEvenAboveTheAbsoluteGoThreshold() {
        GateDecision d = decide(figures("kt", 40, 300, 9, 9), figures("llama", 38, 300, 9, 9), AGREES, RUNBOOK);
        assertThat(d.verdict()).isEqualTo(Verdict.HOLD);
        assertThat(d.reasons()).containsExactly("40.0 tok/s is 1.05x the oracle's 38.0 tok/s, between the 0.75x NO-GO"
                + " and the 1.10x GO ratios (relative rule: the oracle was measured in this job)");
        // exactly the hold ratio is HOLD, just under it NO-GO
        assertThat(decide(figures("kt", 30, 300, 9, 9), figures("llama", 40, 300, 9, 9), AGREES, RUNBOOK).verdict())
                .isEqualTo(Verdict.HOLD);
        assertThat(decide(figures("kt", 29.9, 300, 9, 9), figures("llama", 40, 300, 9, 9), AGREES, RUNBOOK).verdict())
                .isEqualTo(Verdict.NO_GO);
    }

    @Test
    void theAbsoluteFloorHoldsACandidateThatBeatsASlowOracle() {
        GateThresholds floored = withSpeed(new SpeedThresholds(1.1, 0.75, 20, 12, 8));
        GateDecision held = decide(figures("kt", 15, 300, 9, 9), figures("llama", 5, 300, 9, 9), AGREES, floored);
        assertThat(held.verdict()).isEqualTo(Verdict.HOLD);
        assertThat(held.reasons()).containsExactly("15.0 tok/s is 3.00x the oracle's 5.0 tok/s, at least the 1.10x GO"
                + " ratio but under the floor of 20.0 tok/s (relative rule: the oracle was measured in this job)");
        GateDecision go = decide(figures("kt", 25, 300, 9, 9), figures("llama", 5, 300, 9, 9), AGREES, floored);
        assertThat(go.verdict()).isEqualTo(Verdict.GO);
        assertThat(go.reasons().getFirst()).contains("at least the 1.10x GO ratio and the floor of 20.0 tok/s");
    }

    // ---- speed without an oracle: the absolute thresholds, and the reason says why ----

    @Test
    void withoutAnOracleTheAbsoluteThresholdsDecideAndSaySo() {
        GateDecision go = decide(figures("kt", 15, 800, 9, 9), null, null, RUNBOOK);
        assertThat(go.verdict()).isEqualTo(Verdict.GO);
        assertThat(go.reasons().getFirst()).isEqualTo(
                "15.0 tok/s beats the GO threshold of 12.0 tok/s (absolute rule: no oracle serves this model)");

        GateDecision hold = decide(figures("kt", 10, 800, 9, 9), null, null, RUNBOOK);
        assertThat(hold.verdict()).isEqualTo(Verdict.HOLD);
        assertThat(hold.reasons()).containsExactly(
                "10.0 tok/s is between 8.0 and 12.0 tok/s (absolute rule: no oracle serves this model)");

        GateDecision noGo = decide(figures("kt", 7, 800, 9, 9), null, null, RUNBOOK);
        assertThat(noGo.verdict()).isEqualTo(Verdict.NO_GO);
        assertThat(noGo.reasons()).containsExactly(
                "7.0 tok/s is under the NO-GO threshold of 8.0 tok/s (absolute rule: no oracle serves this model)");
    }

    @Test
    void anOracleThatFailedEveryRunLeavesTheAbsoluteRule() {
        List<RunResult> failed = List.of(RunResult.failed(1, "down"));
        BackendFigures dead = BackendFigures.of("llama", List.of(BackendFigures.PromptFigures.of("p", failed)));
        GateDecision d = decide(figures("kt", 15, 800, 9, 9), dead, null, RUNBOOK);
        assertThat(d.verdict()).isEqualTo(Verdict.GO);
        assertThat(d.reasons().getFirst()).endsWith("(absolute rule: the oracle 'llama' failed every run)");
    }

    // ---- agreement with the oracle ----

    @Test
    void aFastCandidateUnderTheAgreementFloorIsNoGoWithTheFigures() {
        OracleAgreement half = agreement(48, 24, 0.9, 4.0, 3);
        GateDecision d = decide(figures("kt", 30, 300, 9, 9), figures("llama", 10, 300, 9, 9), half, RUNBOOK);
        assertThat(d.verdict()).isEqualTo(Verdict.NO_GO);
        assertThat(d.reasons()).containsExactly("agreement with the oracle 50.0% top-1 over 48 positions is under the"
                + " floor of 90.0%, first divergence at position 3");
    }

    @Test
    void logprobsTooFarFromTheOraclesAreNoGoEvenWithTheSameTopToken() {
        OracleAgreement drifting = agreement(48, 48, 0.8, 2.5, null);
        GateDecision d = decide(figures("kt", 30, 300, 9, 9), figures("llama", 10, 300, 9, 9), drifting, RUNBOOK);
        assertThat(d.verdict()).isEqualTo(Verdict.NO_GO);
        assertThat(d.reasons()).containsExactly("agreement with the oracle 100.0% top-1 over 48 positions, but mean"
                + " |Δ logprob| 0.800 (max 2.500) is over the limit of 0.500");
    }

    @Test
    void anAgreeingCandidateIsGoAndTheReasonsShowTheAgreement() {
        GateDecision d = decide(figures("kt", 30, 300, 9, 9), figures("llama", 10, 300, 9, 9),
                agreement(48, 45, 0.05, 0.4, 7), RUNBOOK);
        assertThat(d.verdict()).isEqualTo(Verdict.GO);
        assertThat(d.reasons()).contains("agreement with the oracle 93.8% top-1 over 48 positions (floor 90.0%), mean"
                + " |Δ logprob| 0.050 (max 0.400) (limit 0.500), first divergence at position 7");
    }

    @Test
    void agreementNotMeasuredDoesNotBlockGoUnlessRequired() {
        OracleAgreement unknown = OracleAgreement.notMeasured("the candidate 'kt' does not report logprobs");
        BackendFigures oracle = figures("llama", 10, 300, 9, 9);
        GateDecision go = decide(figures("kt", 30, 300, 9, 9), oracle, unknown, RUNBOOK);
        assertThat(go.verdict()).isEqualTo(Verdict.GO);
        assertThat(go.reasons()).contains("agreement with the oracle not measured (the candidate 'kt' does not report"
                + " logprobs); not required");

        GateThresholds required = new GateThresholds(SpeedThresholds.defaults(), Duration.ofSeconds(2), 0.95,
                new AgreementThresholds(0.9, 0.5, true));
        GateDecision hold = decide(figures("kt", 30, 300, 9, 9), oracle, unknown, required);
        assertThat(hold.verdict()).isEqualTo(Verdict.HOLD);
        assertThat(hold.reasons()).containsExactly("agreement with the oracle not measured (the candidate 'kt' does"
                + " not report logprobs) and lazarus.policy.gate.agreement.required is on");
    }

    @Test
    void everyNoGoReasonIsListed() {
        GateDecision d = decide(figures("kt", 2, 300, 9, 9), figures("llama", 10, 300, 9, 9),
                agreement(48, 10, 1.0, 5.0, 0), RUNBOOK);
        assertThat(d.verdict()).isEqualTo(Verdict.NO_GO);
        assertThat(d.reasons()).hasSize(2);
        assertThat(d.reasons().get(0)).startsWith("agreement with the oracle 20.8% top-1");
        assertThat(d.reasons().get(1)).startsWith("2.0 tok/s is 0.20x the oracle's 10.0 tok/s");
    }

    // ---- success rate, TTFT, memory ----

    @Test
    void successRateUnderNinetyFivePercentIsNoGoWhateverTheSpeed() {
        GateDecision d = decide(figures("kt", 40, 300, 8, 9), null, null, RUNBOOK); // 88.9 %
        assertThat(d.verdict()).isEqualTo(Verdict.NO_GO);
        assertThat(d.reasons().getFirst()).contains("success rate 89%");
        // Exactly 95 %: not under (so not NO-GO) and not over (so not GO).
        assertThat(decide(figures("kt", 40, 300, 19, 20), null, null, RUNBOOK).verdict()).isEqualTo(Verdict.HOLD);
    }

    @Test
    void slowFirstTokenHoldsAFastCandidate() {
        GateDecision d = decide(figures("kt", 30, 2500, 9, 9), figures("llama", 10, 300, 9, 9), AGREES, RUNBOOK);
        assertThat(d.verdict()).isEqualTo(Verdict.HOLD);
        assertThat(d.reasons()).containsExactly("TTFT 2500 ms is not under 2000 ms");
    }

    @Test
    void overTheMemoryBudgetIsNoGo() {
        GateDecision d = GateDecision.decide(figures("kt", 30, 300, 9, 9), null, false, AGREES, RUNBOOK);
        assertThat(d.verdict()).isEqualTo(Verdict.NO_GO);
        assertThat(d.reasons()).containsExactly("the model does not fit the memory budget");
    }

    @Test
    void thresholdsAreConfigurable() {
        GateThresholds strict = new GateThresholds(new SpeedThresholds(2.0, 1.5, 0, 20, 15), Duration.ofMillis(500),
                0.99, new AgreementThresholds(0.99, 0.01, false));
        assertThat(decide(figures("kt", 15, 800, 9, 9), null, null, strict).verdict()).isEqualTo(Verdict.HOLD);
        assertThat(decide(figures("kt", 14, 300, 9, 9), null, null, strict).verdict()).isEqualTo(Verdict.NO_GO);
        assertThat(decide(figures("kt", 18, 300, 9, 9), figures("llama", 10, 300, 9, 9), null, strict).verdict())
                .isEqualTo(Verdict.HOLD); // 1.8x: under 2.0x
        assertThat(decide(figures("kt", 30, 300, 9, 9), figures("llama", 10, 300, 9, 9), AGREES, strict).verdict())
                .isEqualTo(Verdict.GO); // 48/48 top-1, mean |Δ| 0.01 not over 0.01
        assertThat(decide(figures("kt", 30, 300, 9, 9), figures("llama", 10, 300, 9, 9),
                agreement(48, 47, 0.01, 0.05, 5), strict).verdict())
                .isEqualTo(Verdict.NO_GO); // 97.9 % under 99 %
    }

    @Test
    void everyRunFailingIsNoGoWithZeroSpeed() {
        List<RunResult> runs = List.of(RunResult.failed(1, "boom"), RunResult.failed(2, "boom"));
        BackendFigures dead = BackendFigures.of("kt", List.of(BackendFigures.PromptFigures.of("p", runs)));
        assertThat(dead.successRate()).isZero();
        GateDecision d = decide(dead, null, null, RUNBOOK);
        assertThat(d.verdict()).isEqualTo(Verdict.NO_GO);
        assertThat(d.reasons()).containsExactly("success rate 0% is under 95%");
    }

    @Test
    void statIsMeanAndSampleStandardDeviation() {
        Stat s = Stat.of(List.of(10.0, 12.0, 14.0));
        assertThat(s.mean()).isEqualTo(12.0);
        assertThat(s.stdev()).isEqualTo(2.0);
        assertThat(Stat.of(List.of(5.0)).stdev()).isZero();
        assertThat(Stat.of(List.of()).n()).isZero();
    }

    private static GateDecision decide(BackendFigures candidate, BackendFigures oracle, OracleAgreement agreement,
            GateThresholds t) {
        return GateDecision.decide(candidate, oracle, true, agreement, t);
    }

    private static GateThresholds withSpeed(SpeedThresholds speed) {
        return new GateThresholds(speed, RUNBOOK.maxTtft(), RUNBOOK.minSuccessRate(), RUNBOOK.agreement());
    }

    /** One prompt's worth of measured agreement. */
    private static OracleAgreement agreement(int positions, int agreed, double meanDelta, double maxDelta,
            Integer firstDivergence) {
        return OracleAgreement.of(List.of(new OracleAgreement.PromptAgreement("p", "text", positions, agreed,
                firstDivergence, meanDelta, maxDelta, positions * 5, null)));
    }

    /** {@code ok} of {@code total} runs at {@code tps} tok/s and {@code ttftMs}, spread over three prompts. */
    private static BackendFigures figures(String id, double tps, double ttftMs, int ok, int total) {
        List<BackendFigures.PromptFigures> prompts = new ArrayList<>();
        int run = 0;
        for (int p = 0; p < 3; p++) {
            List<RunResult> runs = new ArrayList<>();
            for (int i = p; i < total; i += 3) {
                run++;
                runs.add(run <= ok ? new RunResult(run, true, tps, ttftMs, 256, null) : RunResult.failed(run, "x"));
            }
            prompts.add(BackendFigures.PromptFigures.of("prompt " + p, runs));
        }
        return BackendFigures.of(id, prompts);
    }
}
