package dev.lazarus.gateway.metrics;

import dev.lazarus.gateway.policy.PolicyStore;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;

/**
 * Where the policy keeps its states ({@code policyStore}). A shared store that cannot be reached is
 * {@link #DEGRADED}, not DOWN: the replica goes on serving with the states it last read (routing
 * needs no database), it only cannot change them or hear of others' changes until the store is
 * back. The status is outside the readiness group: a load balancer must not take every replica out
 * because their database went away.
 */
public final class PolicyStoreHealthIndicator implements HealthIndicator {

    /** Serving with the last known policy states. Reported with HTTP 200. */
    public static final Status DEGRADED = new Status("DEGRADED", "serving with the last known policy states");

    private final PolicyStore store;

    public PolicyStoreHealthIndicator(PolicyStore store) {
        this.store = store;
    }

    @Override
    public Health health() {
        PolicyStore.Status status = store.status();
        Health.Builder builder = status.reachable() ? Health.up() : Health.status(DEGRADED);
        builder.withDetail("store", status.kind());
        if (status.lastSync() != null) {
            builder.withDetail("lastSync", status.lastSync().toString());
        }
        if (status.problem() != null) {
            builder.withDetail("problem", status.problem());
        }
        return builder.build();
    }
}
