package dev.lazarus.gateway.policy.pivot;

import dev.lazarus.gateway.policy.Actor;
import dev.lazarus.gateway.policy.PolicyEngine;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Rolls a promoted candidate back when its circuit breaker (named by backend id) opens
 * {@code openings} times within {@code window}: one opening sends traffic to the next backend for
 * a while; repeated openings mean the candidate is not fit to be primary. Subscribe {@link #opened} to
 * {@link dev.lazarus.gateway.policy.BreakerOpenings}, which leaves out an operator forcing a breaker open and calls
 * it off the event loop (a rollback writes the journal with an fsync).
 */
public final class BreakerOpeningsRule {

    private final PolicyEngine engine;
    private final int openings;
    private final Duration window;
    private final Clock clock;
    private final Map<String, Deque<Instant>> recent = new ConcurrentHashMap<>();

    public BreakerOpeningsRule(PolicyEngine engine, int openings, Duration window, Clock clock) {
        this.engine = engine;
        this.openings = openings;
        this.window = window;
        this.clock = clock;
    }

    /** Records one opening of the backend's breaker and applies the rule. */
    public void opened(String backendId) {
        Instant now = clock.instant();
        Deque<Instant> times = recent.computeIfAbsent(backendId, k -> new ArrayDeque<>());
        int count;
        synchronized (times) {
            times.addLast(now);
            while (!times.isEmpty() && times.peekFirst().isBefore(now.minus(window))) {
                times.removeFirst();
            }
            count = times.size();
        }
        if (count >= openings) {
            engine.rollbackIfPromoted(backendId, Actor.POLICY, "circuit breaker opened " + count + " times within "
                    + window.toMinutes() + " min", Map.of("openings", count, "window_seconds", window.toSeconds()))
                    .ifPresent(state -> {
                        synchronized (times) {
                            times.clear();
                        }
                    });
        }
    }
}
