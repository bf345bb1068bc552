package dev.lazarus.gateway.resilience;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import java.time.Duration;
import java.util.Optional;

/**
 * Whether a backend can take traffic now, from the two runtime protections: its last active
 * health check and its circuit breaker. Also the way to its live figures. Read by the route filter,
 * readiness, and the policy and admin code.
 */
public final class BackendAvailability {

    private final HealthMonitor health;
    private final BackendBreakers breakers;
    private final BackendStatsRegistry stats;

    public BackendAvailability(HealthMonitor health, BackendBreakers breakers, BackendStatsRegistry stats) {
        this.health = health;
        this.breakers = breakers;
        this.stats = stats;
    }

    /** The last active check was UP (or none has answered yet). */
    public boolean isHealthy(String backendId) {
        return health.isHealthy(backendId);
    }

    public Optional<HealthResult> lastHealth(String backendId) {
        return health.latest(backendId);
    }

    public CircuitBreaker.State breakerState(String backendId) {
        return breakers.breaker(backendId).getState();
    }

    /** Healthy, and its breaker lets calls through (closed, half-open, or switched off). */
    public boolean isAvailable(String backendId) {
        return isHealthy(backendId) && switch (breakerState(backendId)) {
            case OPEN, FORCED_OPEN -> false;
            default -> true;
        };
    }

    /** While the breaker is OPEN: how long until it lets a probe through; empty otherwise (or when forced open). */
    public Optional<Duration> timeUntilHalfOpen(String backendId) {
        return breakers.timeUntilHalfOpen(backendId);
    }

    public BackendStats stats(String backendId) {
        return stats.stats(backendId);
    }
}
