package dev.lazarus.gateway.metrics;

import dev.lazarus.backend.api.BackendHealth;
import dev.lazarus.backend.api.InferenceBackend;
import java.time.Duration;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.ReactiveHealthIndicator;
import org.springframework.boot.health.contributor.Status;
import reactor.core.publisher.Mono;

/**
 * One backend's health for Actuator: UP → UP, LOADING → OUT_OF_SERVICE (it will come up by
 * itself), DOWN → DOWN. A check that hangs counts as DOWN.
 */
public final class BackendHealthIndicator implements ReactiveHealthIndicator {

    private final InferenceBackend backend;
    private final Duration timeout;

    public BackendHealthIndicator(InferenceBackend backend, Duration timeout) {
        this.backend = backend;
        this.timeout = timeout;
    }

    @Override
    public Mono<Health> health() {
        return Mono.defer(backend::health)
                .timeout(timeout)
                .map(BackendHealthIndicator::toHealth)
                .onErrorResume(e -> Mono.just(Health.down()
                        .withDetail("detail", "health check failed: " + e.getClass().getSimpleName())
                        .build()));
    }

    static Status status(BackendHealth.Status status) {
        return switch (status) {
            case UP -> Status.UP;
            case LOADING -> Status.OUT_OF_SERVICE;
            case DOWN -> Status.DOWN;
        };
    }

    private static Health toHealth(BackendHealth health) {
        Health.Builder builder = Health.status(status(health.status())).withDetails(health.details());
        if (health.detail() != null) {
            builder.withDetail("detail", health.detail());
        }
        return builder.build();
    }
}
