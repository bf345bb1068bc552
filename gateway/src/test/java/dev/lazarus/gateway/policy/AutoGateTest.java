package dev.lazarus.gateway.policy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.backend.api.BackendHealth;
import dev.lazarus.gateway.policy.gate.AutoGate;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/** {@code lazarus.policy.gate.auto-run}: a gate job whenever a candidate becomes CANDIDATE, once it is UP. */
class AutoGateTest {

    private static final Duration WAIT = Duration.ofSeconds(20);

    @TempDir
    Path dir;

    private final Map<String, Role> roles = new LinkedHashMap<>(Map.of("kt", Role.CANDIDATE, "llama", Role.ORACLE));
    private final AtomicReference<BackendHealth.Status> ktHealth = new AtomicReference<>(BackendHealth.Status.UP);
    private final BlockingQueue<String> submitted = new LinkedBlockingQueue<>();
    private final AtomicInteger jobs = new AtomicInteger();
    private PolicyStore store;
    private AutoGate gate;

    @AfterEach
    void close() {
        if (gate != null) {
            gate.close();
        }
        store.close();
    }

    private PolicyEngine engine() {
        store = PolicyStore.open(dir);
        PolicyEngine engine = new PolicyEngine(store, roles, id -> new PreflightCheck.Outcome(true, "fits", Map.of()),
                Clock.systemUTC());
        engine.start();
        return engine;
    }

    private AutoGate gate(PolicyEngine engine, Duration healthWait) {
        gate = new AutoGate(engine, id -> Mono.fromSupplier(() -> new BackendHealth(ktHealth.get(), "test", Map.of())),
                id -> {
                    String job = "job-" + jobs.incrementAndGet();
                    submitted.add(id);
                    return job;
                }, healthWait, Duration.ofMillis(20), Schedulers.boundedElastic());
        return gate;
    }

    @Test
    void aCandidateAtStartIsBenchmarkedTheOracleNot() throws InterruptedException {
        PolicyEngine engine = engine();
        gate(engine, WAIT).start();
        assertThat(submitted.poll(10, TimeUnit.SECONDS)).isEqualTo("kt");
        awaitNote("gate-started");
        assertThat(store.allEvents()).filteredOn(e -> e.action().equals("gate-started"))
                .singleElement().satisfies(e -> {
                    assertThat(e.backendId()).isEqualTo("kt");
                    assertThat(e.actor()).isEqualTo(Actor.GATE);
                    assertThat(e.figures()).containsEntry("job", "job-1");
                });
        assertThat(submitted.poll(300, TimeUnit.MILLISECONDS)).as("nothing for the oracle").isNull();
    }

    @Test
    void theJobWaitsUntilTheCandidateIsUp() throws InterruptedException {
        ktHealth.set(BackendHealth.Status.LOADING);
        PolicyEngine engine = engine();
        gate(engine, WAIT).start();
        assertThat(submitted.poll(300, TimeUnit.MILLISECONDS)).as("not while it loads").isNull();
        ktHealth.set(BackendHealth.Status.UP);
        assertThat(submitted.poll(10, TimeUnit.SECONDS)).isEqualTo("kt");
    }

    @Test
    void reArmingAfterARollbackRunsTheGateAgainButADrainDoesNot() throws InterruptedException {
        PolicyEngine engine = engine();
        gate(engine, WAIT).start();
        assertThat(submitted.poll(10, TimeUnit.SECONDS)).isEqualTo("kt");
        engine.promote("kt", Actor.OPERATOR, "test", Map.of());
        engine.rollback("kt", Actor.OPERATOR, "test", Map.of());
        assertThat(submitted.poll(300, TimeUnit.MILLISECONDS)).as("not for PROMOTED or ROLLED_BACK").isNull();
        engine.enable("kt", Actor.OPERATOR, "re-armed");
        assertThat(submitted.poll(10, TimeUnit.SECONDS)).isEqualTo("kt");
        engine.drain("kt", Actor.OPERATOR, true);
        engine.drain("kt", Actor.OPERATOR, false);
        assertThat(submitted.poll(300, TimeUnit.MILLISECONDS)).as("draining keeps the state").isNull();
    }

    @Test
    void aCandidateThatNeverComesUpIsJournalledAsSkipped() throws InterruptedException {
        ktHealth.set(BackendHealth.Status.DOWN);
        PolicyEngine engine = engine();
        gate(engine, Duration.ofMillis(200)).start();
        AuditEvent skipped = awaitNote("gate-skipped");
        assertThat(skipped.backendId()).isEqualTo("kt");
        assertThat(skipped.reason()).contains("not UP within");
        assertThat(submitted).isEmpty();
    }

    private AuditEvent awaitNote(String action) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            List<AuditEvent> found = store.allEvents().stream().filter(e -> e.action().equals(action)).toList();
            if (!found.isEmpty()) {
                return found.getFirst();
            }
            Thread.sleep(20);
        }
        throw new AssertionError("no '" + action + "' event in " + store.allEvents());
    }
}
