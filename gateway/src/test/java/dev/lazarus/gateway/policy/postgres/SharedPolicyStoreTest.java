package dev.lazarus.gateway.policy.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lazarus.gateway.policy.Actor;
import dev.lazarus.gateway.policy.AuditEvent;
import dev.lazarus.gateway.policy.BackendLiveStats;
import dev.lazarus.gateway.policy.BreakerEvents;
import dev.lazarus.gateway.policy.BreakerOpenings;
import dev.lazarus.gateway.policy.PolicyConflictException;
import dev.lazarus.gateway.policy.PolicyEngine;
import dev.lazarus.gateway.policy.PolicyState;
import dev.lazarus.gateway.policy.PolicyStore;
import dev.lazarus.gateway.policy.PolicyStoreUnavailableException;
import dev.lazarus.gateway.policy.PreflightCheck;
import dev.lazarus.gateway.policy.Role;
import dev.lazarus.gateway.testing.PostgresServer;
import java.time.Clock;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Two policy engines, as two replicas have, over one real PostgreSQL: what one decides the other
 * sees within a second, a transition is decided on the stored state (one pivot-back, however many
 * judge at once), the journal is one gapless sequence, leases exclude, and the store going away
 * leaves the engines with their last states until it returns.
 */
class SharedPolicyStoreTest {

    private static final Duration POLL = Duration.ofMillis(250);
    private static final AtomicInteger DATABASES = new AtomicInteger();
    private static PostgresServer server;

    private final Map<String, Role> roles = new LinkedHashMap<>(Map.of("kt", Role.CANDIDATE, "llama", Role.ORACLE));
    private final List<PolicyStore> stores = new ArrayList<>();
    private String url;

    @BeforeAll
    static void startPostgres() {
        server = PostgresServer.start();
    }

    @AfterAll
    static void stopPostgres() {
        if (server != null) {
            server.close();
        }
    }

    @BeforeEach
    void database() {
        url = server.createDatabase("shared_" + DATABASES.incrementAndGet());
    }

    @AfterEach
    void closeStores() {
        stores.forEach(PolicyStore::close);
    }

    /** One replica: its own store (pool and feed) and engine, kept in step by the feed. */
    private PolicyEngine replica() {
        PolicyStore store = new PostgresPolicyStore(url, "postgres", PostgresServer.PASSWORD, POLL, 2);
        stores.add(store);
        PolicyEngine engine = new PolicyEngine(store, roles, PreflightCheck.alwaysPasses(), Clock.systemUTC());
        engine.start();
        store.onExternalChange(engine::refresh);
        return engine;
    }

    @Test
    void aTransitionOnOneReplicaIsSeenByTheOtherWithinASecond() throws Exception {
        PolicyEngine a = replica();
        PolicyEngine b = replica();
        assertThat(stores.getFirst().allEvents()).as("registered once, not once per replica").hasSize(2);

        a.promote("kt", Actor.OPERATOR, "gate said GO", Map.of());
        assertWithin(Duration.ofSeconds(1), () -> b.state("kt").orElseThrow().state() == PolicyState.PROMOTED);
        a.rollback("kt", Actor.OPERATOR, "operator pulled it", Map.of());
        assertWithin(Duration.ofSeconds(1), () -> b.state("kt").orElseThrow().state() == PolicyState.ROLLED_BACK);
        assertThat(b.state("kt").orElseThrow().reason()).isEqualTo("operator pulled it");
    }

    @Test
    void aDecisionIsMadeOnTheStoredStateNotOnAStaleCopy() {
        PolicyEngine a = replica();
        PolicyStore bStore = new PostgresPolicyStore(url, "postgres", PostgresServer.PASSWORD, POLL, 2);
        stores.add(bStore);
        // No feed on b: its copy stays CANDIDATE whatever a does.
        PolicyEngine b = new PolicyEngine(bStore, roles, PreflightCheck.alwaysPasses(), Clock.systemUTC());
        b.start();
        a.promote("kt", Actor.OPERATOR, null, Map.of());
        a.rollback("kt", Actor.OPERATOR, null, Map.of());

        assertThatThrownBy(() -> b.promote("kt", Actor.OPERATOR, null, Map.of()))
                .isInstanceOf(PolicyConflictException.class).hasMessageContaining("ROLLED_BACK");
        assertThat(b.state("kt").orElseThrow().state()).as("caught up by the refusal").isEqualTo(PolicyState.ROLLED_BACK);
    }

    @Test
    void replicasJudgingTheSameCandidateAtOnceWriteOnePivotBack() throws Exception {
        List<PolicyEngine> engines = List.of(replica(), replica(), replica());
        engines.getFirst().promote("kt", Actor.OPERATOR, null, Map.of());
        CountDownLatch go = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(engines.size());
        try {
            List<Future<Optional<?>>> results = new ArrayList<>();
            for (PolicyEngine engine : engines) {
                results.add(pool.submit(() -> {
                    go.await();
                    return engine.rollbackIfPromoted("kt", Actor.POLICY, "too slow", Map.of());
                }));
            }
            go.countDown();
            int written = 0;
            for (Future<Optional<?>> result : results) {
                written += result.get().isPresent() ? 1 : 0;
            }
            assertThat(written).isEqualTo(1);
        } finally {
            pool.shutdownNow();
        }
        List<AuditEvent> journal = stores.getFirst().allEvents();
        assertThat(journal).filteredOn(e -> e.action().equals("rollback")).hasSize(1);
        assertThat(journal).extracting(AuditEvent::seq).as("one gapless sequence")
                .containsExactlyElementsOf(java.util.stream.LongStream.rangeClosed(1, journal.size()).boxed().toList());
    }

    @Test
    void aRolledBackCandidateStaysRolledBackWhenEveryReplicaRestarts() {
        PolicyEngine a = replica();
        replica();
        a.promote("kt", Actor.OPERATOR, null, Map.of());
        a.rollback("kt", Actor.POLICY, "breaker opened 3 times", Map.of());
        closeStores();
        stores.clear();

        PolicyEngine restarted = replica();
        assertThat(restarted.state("kt").orElseThrow().state()).isEqualTo(PolicyState.ROLLED_BACK);
        assertThat(restarted.state("kt").orElseThrow().reason()).isEqualTo("breaker opened 3 times");
    }

    @Test
    void aLeaseHasOneHolderUntilReleasedOrExpired() throws Exception {
        replica();
        PolicyStore store = stores.getFirst();
        assertThat(store.tryLease("gate:kt", "r1", Duration.ofMinutes(5))).isTrue();
        assertThat(store.tryLease("gate:kt", "r2", Duration.ofMinutes(5))).isFalse();
        assertThat(store.tryLease("gate:kt", "r1", Duration.ofMinutes(5))).as("renewal").isTrue();
        store.releaseLease("gate:kt", "r1");
        assertThat(store.tryLease("gate:kt", "r2", Duration.ofMillis(200))).isTrue();
        Thread.sleep(400);
        assertThat(store.tryLease("gate:kt", "r1", Duration.ofMinutes(5))).as("r2's lease expired").isTrue();
    }

    @Test
    void withTheDatabaseGoneTheEnginesKeepTheirStatesAndCatchUpWhenItReturns() throws Exception {
        PolicyEngine a = replica();
        PolicyEngine b = replica();
        a.promote("kt", Actor.OPERATOR, null, Map.of());
        assertWithin(Duration.ofSeconds(1), () -> b.state("kt").orElseThrow().state() == PolicyState.PROMOTED);

        server.stop();
        try {
            assertWithin(Duration.ofSeconds(5), () -> !stores.get(1).status().reachable());
            assertThat(b.state("kt").orElseThrow().state()).as("last known state").isEqualTo(PolicyState.PROMOTED);
            assertThatThrownBy(() -> a.rollback("kt", Actor.OPERATOR, null, Map.of()))
                    .isInstanceOf(PolicyStoreUnavailableException.class);
            assertThat(a.state("kt").orElseThrow().state()).as("nothing changed").isEqualTo(PolicyState.PROMOTED);
        } finally {
            server.resume();
        }
        assertWithin(Duration.ofSeconds(10), () -> stores.get(1).status().reachable());
        a.rollback("kt", Actor.OPERATOR, "after the outage", Map.of());
        assertWithin(Duration.ofSeconds(1), () -> b.state("kt").orElseThrow().state() == PolicyState.ROLLED_BACK);
    }

    @Test
    void connectionsFromBeforeAnOutageAreDroppedSoTheFirstWriteAfterItSucceeds() throws Exception {
        PolicyEngine a = replica();
        PostgresPolicyStore store = (PostgresPolicyStore) stores.getFirst();
        a.promote("kt", Actor.OPERATOR, null, Map.of());
        assertThat(store.pooledConnections()).as("warm pool").isPositive();

        server.stop();
        try {
            assertWithin(Duration.ofSeconds(5), () -> !store.status().reachable());
            // The pool hands out a connection used within the last 500 ms unchecked; a restart killed them all.
            assertWithin(Duration.ofSeconds(5), () -> store.pooledConnections() == 0);
        } finally {
            server.resume();
        }
        a.rollback("kt", Actor.OPERATOR, "right after the outage", Map.of());
        assertThat(a.state("kt").orElseThrow().state()).isEqualTo(PolicyState.ROLLED_BACK);
    }

    @Test
    void aBreakerOpeningOnOneReplicaIsInTheJournalEveryReplicaReads() {
        PolicyEngine a = replica();
        replica();
        CircuitBreakerRegistry breakers = CircuitBreakerRegistry.ofDefaults();
        new BreakerOpenings(breakers, Runnable::run).subscribe(new BreakerEvents(a, "r1")::opened);

        breakers.circuitBreaker("kt").transitionToOpenState();
        breakers.circuitBreaker("llama").transitionToForcedOpenState(); // an operator's: journalled by the admin API

        List<AuditEvent> seenByB = stores.get(1).newestEvents(0, 10);
        assertThat(seenByB).filteredOn(e -> e.action().equals("breaker-open")).singleElement().satisfies(e -> {
            assertThat(e.backendId()).isEqualTo("kt");
            assertThat(e.actor()).isEqualTo(Actor.POLICY);
            assertThat(e.figures()).containsEntry("replica", "r1");
            assertThat(e.reason()).startsWith("circuit breaker opened on replica r1");
        });
    }

    @Test
    void liveFiguresOfEveryReplicaAreReadBackAndOldOnesLeftOut() {
        replica();
        PolicyStore store = stores.getFirst();
        Instant now = Instant.now();
        store.publishFigures("r1", Map.of("kt", new BackendLiveStats.Snapshot(12.5, Duration.ofMillis(300),
                Duration.ofMillis(800), 0.1, 20, now)));
        store.publishFigures("r2", Map.of("kt", new BackendLiveStats.Snapshot(Double.NaN, null, null, 0, 3, now)));
        store.publishFigures("gone", Map.of("kt", new BackendLiveStats.Snapshot(1, null, null, 1, 9,
                now.minusSeconds(60))));

        List<BackendLiveStats.Snapshot> kt = store.sharedFigures(Duration.ofSeconds(6)).get("kt");

        assertThat(kt).hasSize(2);
        assertThat(kt.getFirst().tokensPerSecond()).isEqualTo(12.5);
        assertThat(kt.getFirst().ttftP95()).isEqualTo(Duration.ofMillis(800));
        assertThat(kt.get(1).tokensPerSecond()).isNaN();
        assertThat(kt.get(1).ttftP50()).isNull();
    }

    private static void assertWithin(Duration limit, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + limit.toNanos();
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as("within %s", limit).isLessThan(deadline);
            Thread.sleep(20);
        }
    }
}
