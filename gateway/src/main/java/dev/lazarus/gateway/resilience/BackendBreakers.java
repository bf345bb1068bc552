package dev.lazarus.gateway.resilience;

import dev.lazarus.gateway.routing.BackendRegistry;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import java.util.LinkedHashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One Resilience4j circuit breaker per backend, named exactly by the backend id, created at start
 * in the shared {@link CircuitBreakerRegistry} (where the admin API and the Micrometer binder find
 * them) with the thresholds of {@code lazarus.resilience}.
 */
public final class BackendBreakers {

    private static final Logger log = LoggerFactory.getLogger(BackendBreakers.class);

    private final Map<String, CircuitBreaker> breakers = new LinkedHashMap<>();
    private final Map<String, ResilienceProperties.Breaker> thresholds = new LinkedHashMap<>();

    public BackendBreakers(CircuitBreakerRegistry registry, BackendRegistry backends, ResilienceProperties properties) {
        for (var backend : backends.all()) {
            ResilienceProperties.Breaker b = properties.breakerFor(backend.id());
            thresholds.put(backend.id(), b);
            CircuitBreaker breaker = registry.circuitBreaker(backend.id(), config(b));
            breaker.getEventPublisher().onStateTransition(e -> log.warn("backend '{}': circuit breaker {}",
                    e.getCircuitBreakerName(), e.getStateTransition()));
            breakers.put(backend.id(), breaker);
        }
    }

    static CircuitBreakerConfig config(ResilienceProperties.Breaker b) {
        return CircuitBreakerConfig.custom()
                .failureRateThreshold(b.failureRateThreshold())
                .slowCallRateThreshold(b.slowCallRateThreshold())
                // The decorator reports a call's time to first token as its duration (or this
                // limit itself when the call was under the throughput floor): see CircuitBreakerDecorator.
                .slowCallDurationThreshold(b.slowTimeToFirstToken())
                .slidingWindow(b.slidingWindowSize(), b.minimumNumberOfCalls(), b.slidingWindowType())
                .waitDurationInOpenState(b.waitInOpenState())
                .permittedNumberOfCallsInHalfOpenState(b.permittedCallsInHalfOpen())
                // Route filters skip open breakers: without this an open one would never be called
                // again and so never move to half-open.
                .automaticTransitionFromOpenToHalfOpenEnabled(true)
                .ignoreException(error -> !BackendFailures.counts(error))
                .build();
    }

    /** The breaker of backend {@code id}; every configured backend has one. */
    public CircuitBreaker breaker(String id) {
        CircuitBreaker breaker = breakers.get(id);
        if (breaker == null) {
            throw new IllegalArgumentException("no backend '" + id + "'");
        }
        return breaker;
    }

    public ResilienceProperties.Breaker thresholds(String id) {
        return thresholds.get(id);
    }
}
