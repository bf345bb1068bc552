package dev.lazarus.gateway.resilience;

import dev.lazarus.gateway.routing.BackendRegistry;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
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
    /** When each breaker that opened by itself goes half-open; absent while it is not OPEN. */
    private final Map<String, Instant> halfOpenAt = new ConcurrentHashMap<>();
    private final Clock clock;

    public BackendBreakers(CircuitBreakerRegistry registry, BackendRegistry backends, ResilienceProperties properties) {
        this(registry, backends, properties, Clock.systemUTC());
    }

    /** @param clock the breakers' own clock too, so that the time left in OPEN is told by the clock that ends it */
    public BackendBreakers(CircuitBreakerRegistry registry, BackendRegistry backends, ResilienceProperties properties,
            Clock clock) {
        this.clock = clock;
        for (var backend : backends.all()) {
            ResilienceProperties.Breaker b = properties.breakerFor(backend.id());
            thresholds.put(backend.id(), b);
            CircuitBreaker breaker = registry.circuitBreaker(backend.id(), config(b, clock));
            breaker.getEventPublisher().onStateTransition(e -> {
                log.warn("backend '{}': circuit breaker {}", e.getCircuitBreakerName(), e.getStateTransition());
                if (e.getStateTransition().getToState() == CircuitBreaker.State.OPEN) {
                    // Resilience4j keeps the end of the wait to itself; it is this far from the transition.
                    halfOpenAt.put(backend.id(), clock.instant().plus(b.waitInOpenState()));
                } else {
                    halfOpenAt.remove(backend.id());
                }
            });
            breakers.put(backend.id(), breaker);
        }
    }

    static CircuitBreakerConfig config(ResilienceProperties.Breaker b, Clock clock) {
        return CircuitBreakerConfig.custom()
                .clock(clock)
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

    /**
     * How long until backend {@code id}'s breaker lets a probe through, while it is OPEN (never
     * negative); empty when it is not OPEN, or forced open by an operator (no end is known).
     */
    public Optional<Duration> timeUntilHalfOpen(String id) {
        if (breaker(id).getState() != CircuitBreaker.State.OPEN) {
            return Optional.empty();
        }
        Instant at = halfOpenAt.get(id);
        if (at == null) {
            return Optional.empty();
        }
        Duration left = Duration.between(clock.instant(), at);
        return Optional.of(left.isNegative() ? Duration.ZERO : left);
    }

    public ResilienceProperties.Breaker thresholds(String id) {
        return thresholds.get(id);
    }
}
