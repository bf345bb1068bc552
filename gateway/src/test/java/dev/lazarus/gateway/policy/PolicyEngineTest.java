package dev.lazarus.gateway.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The state machine: every legal transition, the illegal ones, and what a restart keeps. */
class PolicyEngineTest {

    @TempDir
    Path dir;

    private final Map<String, Role> roles = new LinkedHashMap<>(Map.of("kt", Role.CANDIDATE, "llama", Role.ORACLE));
    private boolean preflightPasses = true;
    private final PreflightCheck preflight = id -> new PreflightCheck.Outcome(preflightPasses,
            preflightPasses ? "fits" : "method AMXINT8 needs amx_int8+amx_tile; this CPU lacks amx_int8, amx_tile",
            Map.of("method", "AMXINT8"));
    private PolicyStore store;

    @AfterEach
    void close() {
        if (store != null) {
            store.close();
        }
    }

    private PolicyEngine start() {
        if (store != null) {
            store.close();
        }
        store = PolicyStore.open(dir);
        PolicyEngine engine = new PolicyEngine(store, roles, preflight, Clock.systemUTC());
        engine.start();
        return engine;
    }

    @Test
    void newCandidatePassingPreflightStartsAsCandidateAndOracleAsActive() {
        PolicyEngine engine = start();
        assertThat(engine.state("kt").orElseThrow().state()).isEqualTo(PolicyState.CANDIDATE);
        assertThat(engine.state("kt").orElseThrow().reason()).startsWith("preflight passed");
        assertThat(engine.state("llama").orElseThrow().state()).isEqualTo(PolicyState.ACTIVE);
        assertThat(store.allEvents()).extracting(AuditEvent::actor).containsExactlyInAnyOrder(Actor.PREFLIGHT,
                Actor.SYSTEM);
    }

    @Test
    void candidateFailingPreflightIsDisabledWithTheMissingFlagsAndCannotBeEnabled() {
        preflightPasses = false;
        PolicyEngine engine = start();
        BackendPolicyState kt = engine.state("kt").orElseThrow();
        assertThat(kt.state()).isEqualTo(PolicyState.DISABLED);
        assertThat(kt.reason()).contains("lacks amx_int8, amx_tile");

        assertThatThrownBy(() -> engine.enable("kt", Actor.OPERATOR, null))
                .isInstanceOfSatisfying(PolicyConflictException.class, e -> {
                    assertThat(e.code()).isEqualTo("preflight_failed");
                    assertThat(e.getMessage()).contains("amx_int8");
                });
        assertThat(engine.state("kt").orElseThrow().state()).isEqualTo(PolicyState.DISABLED);
    }

    @Test
    void fullCycleCandidatePromotedRolledBackReArmed() {
        PolicyEngine engine = start();
        engine.promote("kt", Actor.OPERATOR, "looks good", Map.of());
        assertThat(engine.state("kt").orElseThrow().state()).isEqualTo(PolicyState.PROMOTED);
        engine.rollback("kt", Actor.POLICY, "CUDA error", Map.of("pattern", "CUDA error"));
        BackendPolicyState rolledBack = engine.state("kt").orElseThrow();
        assertThat(rolledBack.state()).isEqualTo(PolicyState.ROLLED_BACK);
        assertThat(rolledBack.reason()).isEqualTo("CUDA error");

        assertThatThrownBy(() -> engine.promote("kt", Actor.OPERATOR, null, Map.of()))
                .isInstanceOf(PolicyConflictException.class).hasMessageContaining("Re-arm it first");
        engine.enable("kt", Actor.OPERATOR, "fixed the driver");
        assertThat(engine.state("kt").orElseThrow().state()).isEqualTo(PolicyState.CANDIDATE);

        List<AuditEvent> events = store.allEvents();
        assertThat(events).extracting(AuditEvent::action).containsSubsequence("promote", "rollback", "enable");
        AuditEvent rollback = events.stream().filter(e -> e.action().equals("rollback")).findFirst().orElseThrow();
        assertThat(rollback.actor()).isEqualTo(Actor.POLICY);
        assertThat(rollback.from()).isEqualTo(PolicyState.PROMOTED);
        assertThat(rollback.to()).isEqualTo(PolicyState.ROLLED_BACK);
        assertThat(rollback.figures()).containsEntry("pattern", "CUDA error");
        assertThat(events).extracting(AuditEvent::seq).containsExactly(
                java.util.stream.LongStream.rangeClosed(1, events.size()).boxed().toArray(Long[]::new));
    }

    @Test
    void illegalTransitionsAreConflicts() {
        PolicyEngine engine = start();
        assertThatThrownBy(() -> engine.rollback("kt", Actor.OPERATOR, null, Map.of()))
                .isInstanceOf(PolicyConflictException.class).hasMessageContaining("it is CANDIDATE");
        assertThatThrownBy(() -> engine.enable("kt", Actor.OPERATOR, null)).isInstanceOf(PolicyConflictException.class);
        assertThatThrownBy(() -> engine.promote("llama", Actor.OPERATOR, null, Map.of()))
                .isInstanceOf(PolicyConflictException.class).hasMessageContaining("oracle");
        engine.disable("kt", Actor.OPERATOR, null);
        assertThatThrownBy(() -> engine.disable("kt", Actor.OPERATOR, null)).isInstanceOf(PolicyConflictException.class);
        assertThatThrownBy(() -> engine.promote("kt", Actor.OPERATOR, null, Map.of()))
                .isInstanceOf(PolicyConflictException.class);
        assertThatThrownBy(() -> engine.promote("ghost", Actor.OPERATOR, null, Map.of()))
                .isInstanceOf(UnknownBackendException.class);
        assertThat(engine.rollbackIfPromoted("kt", Actor.POLICY, "slow", Map.of())).isEmpty();
    }

    @Test
    void oracleCanBeDisabledAndEnabledAndDrained() {
        PolicyEngine engine = start();
        engine.disable("llama", Actor.OPERATOR, "maintenance");
        assertThat(engine.state("llama").orElseThrow().routable()).isFalse();
        engine.enable("llama", Actor.OPERATOR, null);
        assertThat(engine.state("llama").orElseThrow().state()).isEqualTo(PolicyState.ACTIVE);

        engine.drain("llama", Actor.OPERATOR, true);
        assertThat(engine.state("llama").orElseThrow().routable()).isFalse();
        assertThatThrownBy(() -> engine.drain("llama", Actor.OPERATOR, true)).isInstanceOf(PolicyConflictException.class);
        engine.drain("llama", Actor.OPERATOR, false);
        assertThat(engine.state("llama").orElseThrow().routable()).isTrue();
    }

    @Test
    void restartKeepsRollbackDrainAndOperatorDisable() {
        PolicyEngine first = start();
        first.promote("kt", Actor.GATE, "GO", Map.of());
        first.rollback("kt", Actor.POLICY, "breaker opened 3 times", Map.of());
        first.drain("llama", Actor.OPERATOR, true);
        long events = store.eventCount();

        PolicyEngine second = start();
        assertThat(second.state("kt").orElseThrow().state()).isEqualTo(PolicyState.ROLLED_BACK);
        assertThat(second.state("kt").orElseThrow().reason()).isEqualTo("breaker opened 3 times");
        assertThat(second.state("llama").orElseThrow().draining()).isTrue();
        assertThat(store.eventCount()).isEqualTo(events); // nothing re-decided at start

        second.disable("kt", Actor.OPERATOR, "hands off");
        assertThat(start().state("kt").orElseThrow().state()).isEqualTo(PolicyState.DISABLED);
    }

    @Test
    void promotedCandidateIsDisabledAtStartWhenTheMachineNoLongerPassesPreflight() {
        start().promote("kt", Actor.OPERATOR, null, Map.of());
        preflightPasses = false;
        BackendPolicyState kt = start().state("kt").orElseThrow();
        assertThat(kt.state()).isEqualTo(PolicyState.DISABLED);
        assertThat(kt.reason()).contains("preflight failed");
    }

    @Test
    void roleChangeInConfigurationIsAppliedAtStart() {
        start().promote("kt", Actor.OPERATOR, null, Map.of());
        roles.put("kt", Role.ORACLE);
        assertThat(start().state("kt").orElseThrow().state()).isEqualTo(PolicyState.ACTIVE);
        roles.put("kt", Role.CANDIDATE);
        assertThat(start().state("kt").orElseThrow().state()).isEqualTo(PolicyState.CANDIDATE);
    }

    @Test
    void journalPagesNewestFirst() {
        PolicyEngine engine = start();
        for (int i = 0; i < 5; i++) {
            engine.drain("llama", Actor.OPERATOR, true);
            engine.drain("llama", Actor.OPERATOR, false);
        }
        long total = store.eventCount();
        assertThat(total).isEqualTo(12);
        assertThat(store.newestEvents(0, 3)).extracting(AuditEvent::seq).containsExactly(12L, 11L, 10L);
        assertThat(store.newestEvents(9, 5)).extracting(AuditEvent::seq).containsExactly(3L, 2L, 1L);
        assertThat(store.newestEvents(12, 5)).isEmpty();
    }
}
