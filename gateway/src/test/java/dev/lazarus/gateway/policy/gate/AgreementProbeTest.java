package dev.lazarus.gateway.policy.gate;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.backend.api.BackendCapabilities;
import dev.lazarus.gateway.routing.RouteTarget;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The agreement probe on toy language models behind the SPI: the same model agrees everywhere,
 * another model does not, and a candidate that cannot be scored says why.
 */
class AgreementProbeTest {

    private static final List<String> PROMPTS = BenchmarkRunner.PROMPTS;
    private static final AgreementProbe PROBE = new AgreementProbe(16, Duration.ofSeconds(10));

    private final ToyModelBackend oracle = ToyModelBackend.of("oracle", 1);
    private final AtomicInteger calls = new AtomicInteger();

    @Test
    void theSameModelAgreesAtEveryPositionWithNoLogprobDifference() {
        OracleAgreement a = measure(ToyModelBackend.of("twin", 1));

        assertThat(a.measured()).isTrue();
        assertThat(a.positions()).isEqualTo(48);
        assertThat(a.top1Agreement()).isEqualTo(1.0);
        assertThat(a.meanAbsLogprobDelta()).isZero();
        assertThat(a.maxAbsLogprobDelta()).isZero();
        assertThat(a.firstDivergence()).isNull();
        assertThat(a.prompts()).hasSize(3);
        assertThat(a.prompts().getFirst().deltas()).isEqualTo(16 * 5);
        assertThat(a.prompts().getFirst().oracleText()).isNotEmpty();
        assertThat(calls).hasValue(2 * 48); // one call of each per position
    }

    /** A candidate computing attention in another order than the oracle: said, not scored as disagreement. */
    @Test
    void anotherAttentionOrderOrCacheTypeIsAReasonNotADisagreement() {
        oracle.stating(Map.of("flash_attention", "on", "cache_type_k", "f16", "cache_type_v", "f16"));
        OracleAgreement a = measure(ToyModelBackend.of("twin", 1).stating(Map.of("flash_attention", "off",
                "cache_type_k", "f16", "cache_type_v", "q8_0")));

        assertThat(a.measured()).isFalse();
        assertThat(a.reason()).contains("'twin'", "'oracle'", "flash_attention off on the candidate, on on the oracle",
                "cache_type_v q8_0 on the candidate, f16 on the oracle").doesNotContain("cache_type_k");
        assertThat(calls).as("nothing asked").hasValue(0);

        // stated alike, or left unstated by one side (a llama-server someone else started): measured
        assertThat(measure(ToyModelBackend.of("twin", 1).stating(Map.of("flash_attention", "ON"))).measured()).isTrue();
        oracle.stating(Map.of());
        assertThat(measure(ToyModelBackend.of("twin", 1).stating(Map.of("flash_attention", "off"))).measured()).isTrue();
    }

    @Test
    void anotherModelDivergesAndItsAgreementShowsIt() {
        OracleAgreement a = measure(ToyModelBackend.of("stranger", 2));

        assertThat(a.measured()).isTrue();
        assertThat(a.positions()).isEqualTo(48);
        assertThat(a.top1Agreement()).isLessThan(0.5);
        assertThat(a.firstDivergence()).isNotNull();
        assertThat(a.meanAbsLogprobDelta()).isGreaterThan(0.5);
        // the path is the oracle's: the same text whoever the candidate is
        assertThat(a.prompts()).extracting(OracleAgreement.PromptAgreement::oracleText)
                .isEqualTo(measure(ToyModelBackend.of("twin", 1)).prompts().stream()
                        .map(OracleAgreement.PromptAgreement::oracleText).toList());
    }

    @Test
    void aTokenThatIsHalfACharacterIsCompletedFromTheOracleAndNotScoredAlone() {
        ToyModelBackend accents = new ToyModelBackend("oracle", 1, ToyModelBackend.Style.E_ACUTE,
                BackendCapabilities.all(), ToyModelBackend.Mode.NORMAL);
        ToyModelBackend twin = new ToyModelBackend("twin", 1, ToyModelBackend.Style.E_ACUTE,
                BackendCapabilities.all(), ToyModelBackend.Mode.NORMAL);
        OracleAgreement a = new AgreementProbe(6, Duration.ofSeconds(10))
                .measure(new RouteTarget(twin, "toy"), new RouteTarget(accents, "toy"), List.of("say é"), Map.of(),
                        calls::incrementAndGet);

        OracleAgreement.PromptAgreement p = a.prompts().getFirst();
        assertThat(p.oracleText()).isEqualTo("ééé");
        assertThat(p.positions()).as("one scored position per character of two tokens").isEqualTo(3);
        assertThat(p.agreed()).isEqualTo(3);
        assertThat(calls).hasValue(3 * 3); // oracle, candidate, oracle again to finish the character
    }

    /** llama-server streams a token that starts a character with neither text nor logprobs: not the end of the answer. */
    @Test
    void aServerThatStreamsWholeCharactersOnlyIsStillWalked() {
        ToyModelBackend accents = new ToyModelBackend("oracle", 1, ToyModelBackend.Style.E_ACUTE,
                BackendCapabilities.all(), ToyModelBackend.Mode.WHOLE_CHARACTERS);
        ToyModelBackend twin = new ToyModelBackend("twin", 1, ToyModelBackend.Style.E_ACUTE,
                BackendCapabilities.all(), ToyModelBackend.Mode.WHOLE_CHARACTERS);
        OracleAgreement a = new AgreementProbe(6, Duration.ofSeconds(10))
                .measure(new RouteTarget(twin, "toy"), new RouteTarget(accents, "toy"), List.of("say é"), Map.of(),
                        calls::incrementAndGet);

        OracleAgreement.PromptAgreement p = a.prompts().getFirst();
        assertThat(p.oracleText()).isEqualTo("ééé");
        assertThat(p.positions()).isEqualTo(3);
        assertThat(p.agreed()).isEqualTo(3);
    }

    /** A token without text leaves the conversation where it was: it is scored once and the walk ends, with a note. */
    @Test
    void aTokenWithoutTextEndsTheWalkInsteadOfBeingScoredAgainAndAgain() {
        ToyModelBackend control = new ToyModelBackend("oracle", 1, ToyModelBackend.Style.CONTROL_ONLY,
                BackendCapabilities.all(), ToyModelBackend.Mode.NORMAL);
        ToyModelBackend text = ToyModelBackend.of("kt", 2);
        OracleAgreement a = new AgreementProbe(6, Duration.ofSeconds(10))
                .measure(new RouteTarget(text, "toy"), new RouteTarget(control, "toy"), List.of("hi"), Map.of(),
                        calls::incrementAndGet);

        OracleAgreement.PromptAgreement p = a.prompts().getFirst();
        assertThat(p.positions()).as("the one position, scored once").isEqualTo(1);
        assertThat(p.agreed()).isZero();
        assertThat(p.note()).contains("no text");
    }

    @Test
    void bytesThatAreNoUtf8GoOnAsReplacementCharactersAndEveryPositionIsScored() {
        ToyModelBackend stray = new ToyModelBackend("oracle", 1, ToyModelBackend.Style.STRAY_BYTES,
                BackendCapabilities.all(), ToyModelBackend.Mode.NORMAL);
        ToyModelBackend twin = new ToyModelBackend("twin", 1, ToyModelBackend.Style.STRAY_BYTES,
                BackendCapabilities.all(), ToyModelBackend.Mode.NORMAL);
        OracleAgreement a = new AgreementProbe(6, Duration.ofSeconds(10))
                .measure(new RouteTarget(twin, "toy"), new RouteTarget(stray, "toy"), List.of("babble"), Map.of(),
                        calls::incrementAndGet);

        OracleAgreement.PromptAgreement p = a.prompts().getFirst();
        assertThat(p.oracleText()).isEqualTo("\uFFFDa\uFFFDa\uFFFDa");
        assertThat(p.positions()).isEqualTo(6);
        assertThat(p.agreed()).isEqualTo(6);
        assertThat(p.note()).isNull();
    }

    @Test
    void aCandidateWithoutLogprobsIsNotMeasuredAndNotCalled() {
        ToyModelBackend mute = new ToyModelBackend("kt", 1, ToyModelBackend.Style.TEXT,
                new BackendCapabilities(true, true, false, true, true), ToyModelBackend.Mode.NORMAL);
        OracleAgreement a = measure(mute);
        assertThat(a.measured()).isFalse();
        assertThat(a.reason()).isEqualTo("the candidate 'kt' does not report logprobs");
        assertThat(mute.calls).hasValue(0);
        assertThat(oracle.calls).hasValue(0);
    }

    @Test
    void aCandidateThatCannotContinueAnAssistantMessageIsNotMeasured() {
        OracleAgreement a = measure(new ToyModelBackend("kt", 1, ToyModelBackend.Style.TEXT,
                new BackendCapabilities(true, true, true, false, true), ToyModelBackend.Mode.NORMAL));
        assertThat(a.reason()).isEqualTo("the candidate 'kt' cannot continue an assistant message (assistant prefill)");
    }

    @Test
    void anOracleThatCannotBeScoredIsNamed() {
        ToyModelBackend mute = new ToyModelBackend("llama", 1, ToyModelBackend.Style.TEXT,
                new BackendCapabilities(true, true, false, true, true), ToyModelBackend.Mode.NORMAL);
        OracleAgreement a = PROBE.measure(new RouteTarget(ToyModelBackend.of("kt", 1), "toy"),
                new RouteTarget(mute, "toy"), PROMPTS, Map.of(), calls::incrementAndGet);
        assertThat(a.reason()).isEqualTo("the oracle 'llama' does not report logprobs");
    }

    @Test
    void logprobsPromisedButNotSentAndFailedCallsAreReasonsNotExceptions() {
        assertThat(measure(new ToyModelBackend("kt", 1, ToyModelBackend.Style.TEXT, BackendCapabilities.all(),
                ToyModelBackend.Mode.NO_LOGPROBS_SENT)).reason())
                .isEqualTo("the candidate 'kt' generated text without logprobs");
        OracleAgreement failed = measure(new ToyModelBackend("kt", 1, ToyModelBackend.Style.TEXT, BackendCapabilities.all(),
                ToyModelBackend.Mode.FAILS));
        assertThat(failed.measured()).isFalse();
        assertThat(failed.reason()).isEqualTo("the candidate 'kt' failed: toy kt is down");
    }

    private OracleAgreement measure(ToyModelBackend candidate) {
        return PROBE.measure(new RouteTarget(candidate, "toy"), new RouteTarget(oracle, "toy"), PROMPTS, Map.of(),
                calls::incrementAndGet);
    }
}
