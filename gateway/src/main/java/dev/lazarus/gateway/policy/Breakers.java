package dev.lazarus.gateway.policy;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import java.util.Optional;

/**
 * The circuit breakers, one per backend and named by its id, as the resilience package registers
 * them; the policy and the admin API only read and steer them. Without a registry bean (the
 * resilience package absent) a private one stands in so that the admin API still works.
 */
public final class Breakers {

    private final CircuitBreakerRegistry registry;

    public Breakers(CircuitBreakerRegistry registry) {
        this.registry = registry;
    }

    public CircuitBreakerRegistry registry() {
        return registry;
    }

    /** The backend's breaker if one exists. */
    public Optional<CircuitBreaker> find(String backendId) {
        return registry.find(backendId);
    }

    /** The backend's breaker, created with the registry's default configuration when missing. */
    public CircuitBreaker get(String backendId) {
        return registry.circuitBreaker(backendId);
    }
}
