package dev.lazarus.gateway.policy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.backend.api.BackendErrorKind;
import dev.lazarus.backend.api.BackendException;
import dev.lazarus.gateway.policy.pivot.BreakerOpeningsRule;
import dev.lazarus.gateway.policy.pivot.FatalErrorRule;
import dev.lazarus.gateway.policy.pivot.SlowGenerationRule;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The three pivot-back rules, each rolling back a promoted candidate and nothing else. */
class PivotRulesTest {

    private final MutableClock clock = new MutableClock();
    private final PolicyStore store = PolicyStore.inMemory();
    private PolicyEngine engine;

    @BeforeEach
    void promoteKt() {
        Map<String, Role> roles = new LinkedHashMap<>();
        roles.put("kt", Role.CANDIDATE);
        roles.put("llama", Role.ORACLE);
        engine = new PolicyEngine(store, roles, PreflightCheck.alwaysPasses(), clock);
        engine.start();
        engine.promote("kt", Actor.OPERATOR, null, Map.of());
    }

    @AfterEach
    void close() {
        store.close();
    }

    @Test
    void fatalErrorTextRollsBackAtOnceWithTheMessage() {
        FatalErrorRule rule = new FatalErrorRule(engine, List.of("CUDA error", "out of memory"));
        rule.accept("kt", new BackendException(BackendErrorKind.UPSTREAM, "upstream said 500: boring"));
        assertThat(state()).isEqualTo(PolicyState.PROMOTED);

        rule.accept("kt", new BackendException(BackendErrorKind.INTERNAL, "engine failed",
                new IllegalStateException("CUDA error: an illegal memory access was encountered")));
        assertThat(state()).isEqualTo(PolicyState.ROLLED_BACK);
        assertThat(engine.state("kt").orElseThrow().reason())
                .isEqualTo("fatal backend error: CUDA error: an illegal memory access was encountered");
        AuditEvent last = store.newestEvents(0, 1).getFirst();
        assertThat(last.actor()).isEqualTo(Actor.POLICY);
        assertThat(last.figures()).containsEntry("pattern", "CUDA error").containsEntry("error", "INTERNAL");
    }

    @Test
    void requestFaultsAreNeverFatalEvenWhenTheirTextMatches() {
        new FatalErrorRule(engine, List.of("out of memory"))
                .accept("kt", BackendException.contextLengthExceeded("prompt would run the KV cache out of memory"));
        assertThat(state()).isEqualTo(PolicyState.PROMOTED);
    }

    @Test
    void slowGenerationRollsBackOnlyWhenSustainedOverTheWindow() {
        Map<String, BackendLiveStats.Snapshot> live = new LinkedHashMap<>();
        SlowGenerationRule rule = new SlowGenerationRule(engine, id -> Optional.ofNullable(live.get(id)), 10,
                Duration.ofSeconds(60), clock);

        live.put("kt", snapshot(6));
        rule.check();
        clock.advance(Duration.ofSeconds(40));
        live.put("kt", snapshot(14)); // recovered: the window restarts
        rule.check();
        clock.advance(Duration.ofSeconds(30));
        live.put("kt", snapshot(7));
        rule.check();
        clock.advance(Duration.ofSeconds(59));
        rule.check();
        assertThat(state()).isEqualTo(PolicyState.PROMOTED);

        live.remove("kt"); // no traffic: no judgement, the window restarts
        clock.advance(Duration.ofSeconds(5));
        rule.check();
        live.put("kt", snapshot(7));
        rule.check();
        clock.advance(Duration.ofSeconds(60));
        rule.check();
        assertThat(state()).isEqualTo(PolicyState.ROLLED_BACK);
        assertThat(engine.state("kt").orElseThrow().reason())
                .isEqualTo("generation speed 7.0 tok/s under the floor of 10.0 tok/s for 60s");
    }

    @Test
    void breakerOpeningNTimesWithinMMinutesRollsBack() {
        CircuitBreakerRegistry registry = CircuitBreakerRegistry.of(CircuitBreakerConfig.custom()
                .slidingWindowSize(2).minimumNumberOfCalls(2).failureRateThreshold(50).build());
        BreakerOpeningsRule rule = new BreakerOpeningsRule(engine, 3, Duration.ofMinutes(10), clock);
        new BreakerOpenings(registry, Runnable::run).subscribe(opening -> rule.opened(opening.backendId()));
        CircuitBreaker breaker = registry.circuitBreaker("kt"); // created after attach: followed too

        openByFailures(breaker);
        clock.advance(Duration.ofMinutes(11)); // the first opening leaves the window
        openByFailures(breaker);
        breaker.transitionToForcedOpenState(); // an operator's doing: not counted
        breaker.transitionToClosedState();
        openByFailures(breaker);
        assertThat(state()).isEqualTo(PolicyState.PROMOTED);

        clock.advance(Duration.ofMinutes(2));
        openByFailures(breaker);
        assertThat(state()).isEqualTo(PolicyState.ROLLED_BACK);
        assertThat(engine.state("kt").orElseThrow().reason()).isEqualTo("circuit breaker opened 3 times within 10 min");
    }

    private static void openByFailures(CircuitBreaker breaker) {
        breaker.transitionToClosedState();
        for (int i = 0; i < 2; i++) {
            breaker.onError(0, java.util.concurrent.TimeUnit.MILLISECONDS, new IllegalStateException("500"));
        }
        assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.OPEN);
    }

    private PolicyState state() {
        return engine.state("kt").orElseThrow().state();
    }

    private BackendLiveStats.Snapshot snapshot(double tps) {
        return new BackendLiveStats.Snapshot(tps, Duration.ofMillis(300), Duration.ofMillis(900), 0, 20,
                clock.instant());
    }

    /** A clock the test moves by hand. */
    static final class MutableClock extends Clock {
        private Instant now = Instant.parse("2026-01-01T00:00:00Z");

        void advance(Duration d) {
            now = now.plus(d);
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }
    }
}
