package dev.lazarus.kt.fidelity;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

/** Pooling the rows, the thresholds' verdict and the two output forms. */
class FidelityReportTest {

    private static final PromptFidelity SHORT = new PromptFidelity("short", 4, 16, 16, 80, 2e-6, 1e-6,
            PromptFidelity.NONE, PromptFidelity.NONE);
    private static final PromptFidelity LONG = new PromptFidelity("long", 9, 48, 40, 200, 0.5, 0.02, 7, 5);

    private static FidelityReport report(PromptFidelity... rows) {
        return new FidelityReport("m.gguf", "http://oracle", FidelityOptions.defaults(), List.of(rows));
    }

    @Test
    void overallPoolsPositionsAndCandidatesNotPerPromptFractions() {
        FidelitySummary o = report(SHORT, LONG).overall();

        assertThat(o.positions()).isEqualTo(64);
        assertThat(o.agreed()).isEqualTo(56);
        assertThat(o.top1Agreement()).isEqualTo(56 / 64.0); // not (1 + 40/48) / 2
        assertThat(o.maxDelta()).isEqualTo(0.5);
        assertThat(o.meanDelta()).isCloseTo((80 * 1e-6 + 200 * 0.02) / 280, within(1e-15));
        assertThat(o.firstDivergence()).isEqualTo(7);
        assertThat(o.divergedPrompts()).isEqualTo(1);
        assertThat(o.freeRunningDivergence()).isEqualTo(5);
    }

    @Test
    void aFreeRunningDivergenceNotMeasuredForOnePromptIsNotMeasuredOverall() {
        PromptFidelity unmeasured = SHORT.withFreeRunningDivergence(PromptFidelity.NOT_MEASURED);
        assertThat(report(unmeasured, LONG).overall().freeRunningDivergence()).isEqualTo(PromptFidelity.NOT_MEASURED);
        assertThat(report(SHORT).overall().freeRunningDivergence()).isEqualTo(PromptFidelity.NONE);
    }

    @Test
    void thresholdsNameWhatIsMissed() {
        FidelityReport r = report(SHORT, LONG);

        assertThat(new FidelityThresholds(0.8, 1.0).violations(r)).isEmpty();
        assertThat(new FidelityThresholds(0.99, Double.NaN).violations(r))
                .containsExactly("top-1 agreement 0.8750 (56 of 64 positions) is below the minimum 0.99");
        assertThat(new FidelityThresholds(Double.NaN, 0.1).violations(r))
                .containsExactly("max |Δ logprob| 0.500 is above the maximum 0.1");
        assertThat(FidelityThresholds.NONE.violations(r)).isEmpty();
        assertThatThrownBy(() -> new FidelityThresholds(1.5, Double.NaN)).hasMessageContaining("[0, 1]");
    }

    @Test
    void theTableHasARowPerPromptAndTheOverallLine() {
        String table = report(SHORT, LONG).toString();

        assertThat(table).contains("Fidelity of m.gguf against http://oracle: 64 greedy tokens per prompt, "
                + "teacher-forced stepwise, top-5 logprobs");
        assertThat(table).containsPattern("short +4 +16/16 +1\\.0000 +2\\.00e-06 +1\\.00e-06 +none +none");
        assertThat(table).containsPattern("long +9 +40/48 +0\\.8333 +5\\.00e-01 +2\\.00e-02 +7 +5");
        assertThat(table).containsPattern("overall +2 pr\\. +56/64 +0\\.8750");
        assertThat(table).contains("1 of 2 prompts diverged");
    }

    @Test
    void jsonCarriesTheNumbersAndTheVerdict() {
        JsonNode json = JsonMapper.builder().build().readTree(
                ReportFormat.json(report(SHORT, LONG), new FidelityThresholds(0.99, Double.NaN)));

        assertThat(json.path("forcing").asString()).isEqualTo("STEPWISE");
        assertThat(json.path("overall").path("top1Agreement").asDouble()).isEqualTo(0.875);
        assertThat(json.path("overall").path("firstDivergence").asInt()).isEqualTo(7);
        assertThat(json.path("prompts").get(0).path("firstDivergence").asInt()).isEqualTo(-1);
        assertThat(json.path("thresholds").path("passed").asBoolean()).isFalse();
        assertThat(json.path("thresholds").path("maxDelta").isNull()).isTrue();
        assertThat(json.path("thresholds").path("violations")).hasSize(1);

        JsonNode unmeasured = JsonMapper.builder().build().readTree(ReportFormat.json(
                report(SHORT.withFreeRunningDivergence(PromptFidelity.NOT_MEASURED)), FidelityThresholds.NONE));
        assertThat(unmeasured.path("overall").path("freeRunningDivergence").isNull()).isTrue();
        assertThat(unmeasured.has("thresholds")).isFalse();
    }
}
