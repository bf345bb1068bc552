package dev.lazarus.gateway.policy.gate;

import dev.lazarus.backend.api.BackendHealth;
import dev.lazarus.gateway.policy.Actor;
import dev.lazarus.gateway.policy.BackendPolicyState;
import dev.lazarus.gateway.policy.PolicyEngine;
import dev.lazarus.gateway.policy.PolicyState;
import dev.lazarus.gateway.policy.Role;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * Starts a decision-gate job by itself when a candidate becomes {@code CANDIDATE}
 * ({@code lazarus.policy.gate.auto-run}): at start for every candidate that is {@code CANDIDATE}
 * then, and whenever one enters that state later (preflight passing, an operator re-arming it
 * after a rollback). A backend that just came up is usually still loading its model, so the job
 * waits until the candidate's own health check says UP; one that is not UP within the wait is
 * journalled as skipped. With {@code auto-promote} a GO then promotes it: the whole path from
 * "configured" to "serving" needs no operator.
 */
public final class AutoGate implements AutoCloseable {

    /** Starts a job for a candidate; returns the job id. */
    @FunctionalInterface
    public interface Submitter {
        String submit(String candidateId);
    }

    private static final Logger log = LoggerFactory.getLogger(AutoGate.class);

    private final PolicyEngine engine;
    private final Function<String, Mono<BackendHealth>> health;
    private final Submitter submitter;
    private final Duration healthWait;
    private final Duration pollInterval;
    private final Scheduler scheduler;
    private final Map<String, PolicyState> lastSeen = new ConcurrentHashMap<>();
    private final Set<String> waiting = ConcurrentHashMap.newKeySet();
    private final Disposable.Composite runs = Disposables.composite();

    /**
     * @param health       a backend's own cheap health check
     * @param healthWait   how long a job waits for the candidate to be UP
     * @param pollInterval how often it asks meanwhile
     */
    public AutoGate(PolicyEngine engine, Function<String, Mono<BackendHealth>> health, Submitter submitter,
            Duration healthWait, Duration pollInterval, Scheduler scheduler) {
        this.engine = engine;
        this.health = health;
        this.submitter = submitter;
        this.healthWait = healthWait;
        this.pollInterval = pollInterval;
        this.scheduler = scheduler;
    }

    /** Listens for transitions, and starts a job for each candidate that is CANDIDATE now. */
    public void start() {
        engine.onChange(this::changed);
        for (BackendPolicyState state : engine.states()) {
            PolicyState previous = lastSeen.put(state.backendId(), state.state());
            if (previous == null && isCandidate(state)) {
                trigger(state.backendId(), "candidate at start");
            }
        }
    }

    private void changed(BackendPolicyState state) {
        PolicyState previous = lastSeen.put(state.backendId(), state.state());
        // Drain toggles and notes keep the state: only an entry into CANDIDATE counts.
        if (previous != PolicyState.CANDIDATE && isCandidate(state)) {
            trigger(state.backendId(), "became CANDIDATE: " + state.reason());
        }
    }

    private static boolean isCandidate(BackendPolicyState state) {
        return state.role() == Role.CANDIDATE && state.state() == PolicyState.CANDIDATE;
    }

    private void trigger(String id, String why) {
        if (!waiting.add(id)) {
            return; // a job for it is already waiting for it to come up
        }
        Mono<Boolean> up = Mono.defer(() -> health.apply(id))
                .map(h -> h.status() == BackendHealth.Status.UP)
                .onErrorReturn(false);
        runs.add(up.filter(Boolean::booleanValue)
                .repeatWhenEmpty(repeats -> repeats.concatMap(n -> Mono.delay(pollInterval, scheduler)))
                .timeout(healthWait, scheduler)
                .subscribeOn(scheduler)
                .doFinally(signal -> waiting.remove(id))
                .subscribe(ok -> submit(id, why), failure -> skipped(id)));
    }

    private void submit(String id, String why) {
        if (engine.state(id).map(s -> s.state() != PolicyState.CANDIDATE).orElse(true)) {
            return; // promoted, disabled or rolled back while it came up: nothing to evaluate
        }
        try {
            String job = submitter.submit(id);
            engine.note(id, Actor.GATE, "gate-started", "automatic decision gate run, job " + job + " (" + why + ")",
                    Map.of("job", job));
            log.info("backend '{}': automatic decision gate job {} ({})", id, job, why);
        } catch (RuntimeException e) {
            log.warn("backend '{}': automatic decision gate not started: {}", id, e.getMessage());
        }
    }

    private void skipped(String id) {
        String reason = "automatic decision gate run skipped: the backend was not UP within " + healthWait
                + "; start one with POST /admin/benchmarks";
        log.warn("backend '{}': {}", id, reason);
        engine.note(id, Actor.GATE, "gate-skipped", reason, Map.of("waited_seconds", healthWait.toSeconds()));
    }

    /** Jobs already submitted run on; ones still waiting for their backend are dropped. */
    @Override
    public void close() {
        runs.dispose();
    }
}
