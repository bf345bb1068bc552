package dev.lazarus.gateway.policy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.gateway.policy.gate.BackendFigures;
import dev.lazarus.gateway.policy.gate.GateDecision;
import dev.lazarus.gateway.policy.gate.GateThresholds;
import dev.lazarus.gateway.policy.gate.RunResult;
import dev.lazarus.gateway.policy.gate.Stat;
import dev.lazarus.gateway.policy.gate.Verdict;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Verdicts from fixture figures, at and around every threshold of the runbook. */
class GateDecisionTest {

    private static final GateThresholds RUNBOOK = GateThresholds.defaults();

    @Test
    void fastStableCandidateIsGo() {
        GateDecision d = GateDecision.decide(figures("kt", 15, 800, 9, 9), null, true, RUNBOOK);
        assertThat(d.verdict()).isEqualTo(Verdict.GO);
        assertThat(d.reasons()).anySatisfy(r -> assertThat(r).contains("15.0 tok/s"));
    }

    @Test
    void tenTokensPerSecondAloneIsHoldButGoAtOnePointOneTimesASlowOracle() {
        BackendFigures candidate = figures("kt", 10, 900, 9, 9);
        assertThat(GateDecision.decide(candidate, null, true, RUNBOOK).verdict()).isEqualTo(Verdict.HOLD);
        assertThat(GateDecision.decide(candidate, figures("llama", 9, 700, 9, 9), true, RUNBOOK).verdict())
                .isEqualTo(Verdict.GO); // 10 / 9 = 1.11
        assertThat(GateDecision.decide(candidate, figures("llama", 9.5, 700, 9, 9), true, RUNBOOK).verdict())
                .isEqualTo(Verdict.HOLD); // 1.05
    }

    @Test
    void slowCandidateIsNoGoUnlessItBeatsTheOracleByTenPercent() {
        BackendFigures seven = figures("kt", 7, 900, 9, 9);
        GateDecision alone = GateDecision.decide(seven, null, true, RUNBOOK);
        assertThat(alone.verdict()).isEqualTo(Verdict.NO_GO);
        assertThat(alone.reasons().getFirst()).contains("7.0 tok/s is under 8.0 tok/s");
        assertThat(GateDecision.decide(seven, figures("llama", 5, 900, 9, 9), true, RUNBOOK).verdict())
                .isEqualTo(Verdict.GO);
    }

    @Test
    void successRateUnderNinetyFivePercentIsNoGoWhateverTheSpeed() {
        GateDecision d = GateDecision.decide(figures("kt", 40, 300, 8, 9), null, true, RUNBOOK); // 88.9 %
        assertThat(d.verdict()).isEqualTo(Verdict.NO_GO);
        assertThat(d.reasons().getFirst()).contains("success rate 89%");
        // Exactly 95 %: not under (so not NO-GO) and not over (so not GO).
        assertThat(GateDecision.decide(figures("kt", 40, 300, 19, 20), null, true, RUNBOOK).verdict())
                .isEqualTo(Verdict.HOLD);
    }

    @Test
    void slowFirstTokenHoldsAFastCandidate() {
        GateDecision d = GateDecision.decide(figures("kt", 30, 2500, 9, 9), null, true, RUNBOOK);
        assertThat(d.verdict()).isEqualTo(Verdict.HOLD);
        assertThat(d.reasons()).containsExactly("TTFT 2500 ms is not under 2000 ms");
    }

    @Test
    void overTheMemoryBudgetIsNoGo() {
        assertThat(GateDecision.decide(figures("kt", 30, 300, 9, 9), null, false, RUNBOOK).verdict())
                .isEqualTo(Verdict.NO_GO);
    }

    @Test
    void thresholdsAreConfigurable() {
        GateThresholds strict = new GateThresholds(20, 2.0, 15, Duration.ofMillis(500), 0.99);
        assertThat(GateDecision.decide(figures("kt", 15, 800, 9, 9), null, true, strict).verdict())
                .isEqualTo(Verdict.HOLD);
        assertThat(GateDecision.decide(figures("kt", 14, 300, 9, 9), null, true, strict).verdict())
                .isEqualTo(Verdict.NO_GO);
    }

    @Test
    void everyRunFailingIsNoGoWithZeroSpeed() {
        List<RunResult> runs = List.of(RunResult.failed(1, "boom"), RunResult.failed(2, "boom"));
        BackendFigures dead = BackendFigures.of("kt", List.of(BackendFigures.PromptFigures.of("p", runs)));
        assertThat(dead.successRate()).isZero();
        assertThat(GateDecision.decide(dead, null, true, RUNBOOK).verdict()).isEqualTo(Verdict.NO_GO);
    }

    @Test
    void statIsMeanAndSampleStandardDeviation() {
        Stat s = Stat.of(List.of(10.0, 12.0, 14.0));
        assertThat(s.mean()).isEqualTo(12.0);
        assertThat(s.stdev()).isEqualTo(2.0);
        assertThat(Stat.of(List.of(5.0)).stdev()).isZero();
        assertThat(Stat.of(List.of()).n()).isZero();
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
