package dev.lazarus.gateway.metrics;

import dev.lazarus.gateway.policy.BackendPolicyState;
import dev.lazarus.gateway.policy.PolicyEngine;
import dev.lazarus.gateway.policy.PolicyState;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.Locale;
import org.springframework.stereotype.Component;

/**
 * {@code lazarus_backend_state{backend, state}}: 1 for the policy state each backend is in, 0 for
 * the others (the usual one-hot form, so a dashboard can sum or alert on any state), plus
 * {@code lazarus_backend_draining{backend}}. Read from the policy engine at scrape time.
 */
@Component
class BackendStateMetrics implements MeterBinder {

    private final PolicyEngine policy;

    BackendStateMetrics(PolicyEngine policy) {
        this.policy = policy;
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
            Gauge.builder("lazarus.backend.draining", () -> policy.state(backend)
                            .map(BackendPolicyState::draining).map(d -> d ? 1 : 0).orElse(0))
                    .description("1 while an operator drains the backend")
                    .tag("backend", backend)
                    .register(registry);
        }
    }
}
