package dev.lazarus.gateway.policy.pivot;

import dev.lazarus.gateway.policy.Actor;
import dev.lazarus.gateway.policy.BackendLiveStats;
import dev.lazarus.gateway.policy.BackendPolicyState;
import dev.lazarus.gateway.policy.PolicyEngine;
import dev.lazarus.gateway.policy.PolicyState;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Rolls a promoted candidate back when its live generation speed stays under the floor for a
 * whole window. One slow sample is noise; the rule needs every look within the window to be under
 * the floor, and a look without figures (no traffic) restarts the window.
 */
public final class SlowGenerationRule {

    private final PolicyEngine engine;
    private final BackendLiveStats stats;
    private final double floor;
    private final Duration window;
    private final Clock clock;
    private final Map<String, Instant> slowSince = new ConcurrentHashMap<>();

    public SlowGenerationRule(PolicyEngine engine, BackendLiveStats stats, double floor, Duration window, Clock clock) {
        this.engine = engine;
        this.stats = stats;
        this.floor = floor;
        this.window = window;
        this.clock = clock;
    }

    /** One look at every promoted candidate; called on a schedule. */
    public void check() {
        Instant now = clock.instant();
        for (BackendPolicyState state : engine.states()) {
            String id = state.backendId();
            if (state.state() != PolicyState.PROMOTED) {
                slowSince.remove(id);
                continue;
            }
            Optional<BackendLiveStats.Snapshot> snapshot = stats.snapshot(id);
            double speed = snapshot.map(BackendLiveStats.Snapshot::tokensPerSecond).orElse(Double.NaN);
            if (Double.isNaN(speed) || speed >= floor) {
                slowSince.remove(id);
                continue;
            }
            Instant since = slowSince.computeIfAbsent(id, k -> now);
            Duration slowFor = Duration.between(since, now);
            if (slowFor.compareTo(window) >= 0) {
                slowSince.remove(id);
                engine.rollbackIfPromoted(id, Actor.POLICY, String.format(Locale.ROOT,
                        "generation speed %.1f tok/s under the floor of %.1f tok/s for %ds", speed, floor,
                        slowFor.toSeconds()), Map.of("tokens_per_second", speed, "floor", floor,
                        "slow_seconds", slowFor.toSeconds()));
            }
        }
    }
}
