package dev.lazarus.gateway.metrics;

import dev.lazarus.backend.api.BackendHealth;
import dev.lazarus.gateway.resilience.HealthMonitor;
import dev.lazarus.gateway.resilience.HealthResult;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;

/**
 * One backend's health for Actuator, from the {@link HealthMonitor}'s last check (a probe of the
 * actuator never calls the backend): UP → UP, LOADING → OUT_OF_SERVICE (it will come up by
 * itself), DOWN → DOWN, not checked yet → UNKNOWN.
 */
public final class BackendHealthIndicator implements HealthIndicator {

    private final HealthMonitor monitor;
    private final String backendId;

    public BackendHealthIndicator(HealthMonitor monitor, String backendId) {
        this.monitor = monitor;
        this.backendId = backendId;
    }

    @Override
    public Health health() {
        return monitor.latest(backendId).map(BackendHealthIndicator::toHealth).orElseGet(() -> Health.unknown().build());
    }

    Status status() {
        return monitor.latest(backendId).map(r -> status(r.health().status())).orElse(Status.UNKNOWN);
    }

    static Status status(BackendHealth.Status status) {
        return switch (status) {
            case UP -> Status.UP;
            case LOADING -> Status.OUT_OF_SERVICE;
            case DOWN -> Status.DOWN;
        };
    }

    private static Health toHealth(HealthResult result) {
        BackendHealth health = result.health();
        Health.Builder builder = Health.status(status(health.status())).withDetails(health.details());
        if (health.detail() != null) {
            builder.withDetail("detail", health.detail());
        }
        return builder.withDetail("checkedAt", result.checkedAt().toString()).build();
    }
}
