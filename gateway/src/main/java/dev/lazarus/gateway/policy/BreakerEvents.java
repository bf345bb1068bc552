package dev.lazarus.gateway.policy;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Executor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Breakers stay local (each replica judges what it sees, as Envoy's outlier detection does), but
 * with a shared store a breaker opening is journalled as {@code breaker-open} with the replica's
 * name, so every replica's {@code /admin/events} shows it. An operator forcing a breaker open is
 * journalled by the admin API already and is not repeated here.
 */
public final class BreakerEvents {

    private static final Logger log = LoggerFactory.getLogger(BreakerEvents.class);

    private final PolicyEngine engine;
    private final String replica;
    private final Executor executor;

    /**
     * @param executor where the event is written: breakers report on the thread that recorded the
     *                 call, an event loop, and the write is a database round trip
     */
    public BreakerEvents(PolicyEngine engine, String replica, Executor executor) {
        this.engine = engine;
        this.replica = replica;
        this.executor = executor;
    }

    /** Follows every breaker of the registry, those created later included. */
    public void attach(CircuitBreakerRegistry registry) {
        registry.getAllCircuitBreakers().forEach(this::follow);
        registry.getEventPublisher().onEntryAdded(event -> follow(event.getAddedEntry()));
        registry.getEventPublisher().onEntryReplaced(event -> follow(event.getNewEntry()));
    }

    private void follow(CircuitBreaker breaker) {
        breaker.getEventPublisher().onStateTransition(event -> {
            if (event.getStateTransition().getToState() == CircuitBreaker.State.OPEN) {
                CircuitBreaker.Metrics metrics = breaker.getMetrics();
                float failureRate = metrics.getFailureRate();
                float slowRate = metrics.getSlowCallRate();
                executor.execute(() -> opened(breaker.getName(), failureRate, slowRate));
            }
        });
    }

    void opened(String backendId, float failureRate, float slowCallRate) {
        if (engine.state(backendId).isEmpty()) {
            return; // a breaker of no configured backend
        }
        Map<String, Object> figures = new LinkedHashMap<>();
        figures.put("replica", replica);
        if (failureRate >= 0) {
            figures.put("failure_rate", failureRate);
        }
        if (slowCallRate >= 0) {
            figures.put("slow_call_rate", slowCallRate);
        }
        String reason = String.format(Locale.ROOT, "circuit breaker opened on replica %s (failure rate %.0f%%, slow calls %.0f%%)",
                replica, Math.max(0, failureRate), Math.max(0, slowCallRate));
        try {
            engine.note(backendId, Actor.POLICY, "breaker-open", reason, figures);
        } catch (RuntimeException e) {
            log.warn("backend '{}': breaker opening not published: {}", backendId, e.toString());
        }
    }
}
