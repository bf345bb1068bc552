package dev.lazarus.gateway.metrics;

import dev.lazarus.backend.api.BackendHealth;
import dev.lazarus.gateway.policy.BackendPolicyState;
import dev.lazarus.gateway.policy.PolicyEngine;
import dev.lazarus.gateway.policy.PolicyState;
import dev.lazarus.gateway.resilience.HealthMonitor;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.Locale;
import org.springframework.stereotype.Component;

/**
 * {@code lazarus_backend_state{backend, state}}: 1 for the policy state each backend is in, 0 for
 * the others (the usual one-hot form, so a dashboard can sum or alert on any state), plus
 * {@code lazarus_backend_draining{backend}} and {@code lazarus_backend_up{backend}} (its last health check said UP).
 * Read from the policy engine and the health monitor at scrape time.
 */
@Component
class BackendStateMetrics implements MeterBinder {

    private final PolicyEngine policy;
    private final HealthMonitor health;

    BackendStateMetrics(PolicyEngine policy, HealthMonitor health) {
        this.policy = policy;
        this.health = health;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        for (String backend : policy.backendIds()) {
            for (PolicyState state : PolicyState.values()) {
                Gauge.builder("lazarus.backend.state", () -> policy.state(backend)
                                .map(s -> s.state() == state ? 1 : 0).orElse(0))
                        .description("1 when the backend is in this policy state")
                        .tag("backend", backend)
                        .tag("state", state.name().toLowerCase(Locale.ROOT))
                        .register(registry);
            }
            Gauge.builder("lazarus.backend.up", () -> health.latest(backend)
                            .map(r -> r.health().status() == BackendHealth.Status.UP ? 1 : 0).orElse(0))
                    .description("1 when the backend's last health check said UP (0 while loading, down or unchecked)")
                    .tag("backend", backend)
                    .register(registry);
            Gauge.builder("lazarus.backend.draining", () -> policy.state(backend)
                            .map(BackendPolicyState::draining).map(d -> d ? 1 : 0).orElse(0))
                    .description("1 while an operator drains the backend")
                    .tag("backend", backend)
                    .register(registry);
        }
    }
}
