package dev.lazarus.gateway.policy;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.function.Consumer;

/**
 * One listener on every breaker of the registry (those created later included) that tells each subscriber when a
 * breaker opens by itself; an operator forcing one open is no opening here (the admin API journals that).
 */
public final class BreakerOpenings {

    /**
     * One opening.
     *
     * @param backendId    the breaker's name, a backend id
     * @param failureRate  the breaker's failure rate then, in percent; -1 before it had enough calls
     * @param slowCallRate the same for slow calls
     */
    public record Opening(String backendId, float failureRate, float slowCallRate) {}

    private final Executor executor;
    private final List<Consumer<Opening>> subscribers = new CopyOnWriteArrayList<>();

    /**
     * @param executor where subscribers run, each on its own task: breakers report on the thread that recorded the
     *                 call, an event loop in the gateway, and subscribers write the journal or a database
     */
    public BreakerOpenings(CircuitBreakerRegistry registry, Executor executor) {
        this.executor = executor;
        registry.getAllCircuitBreakers().forEach(this::follow);
        registry.getEventPublisher().onEntryAdded(event -> follow(event.getAddedEntry()));
        registry.getEventPublisher().onEntryReplaced(event -> follow(event.getNewEntry()));
    }

    public BreakerOpenings subscribe(Consumer<Opening> subscriber) {
        subscribers.add(subscriber);
        return this;
    }

    private void follow(CircuitBreaker breaker) {
        breaker.getEventPublisher().onStateTransition(event -> {
            if (event.getStateTransition().getToState() == CircuitBreaker.State.OPEN) {
                CircuitBreaker.Metrics metrics = breaker.getMetrics(); // read now: the rates as they opened it
                Opening opening = new Opening(breaker.getName(), metrics.getFailureRate(), metrics.getSlowCallRate());
                subscribers.forEach(s -> executor.execute(() -> s.accept(opening)));
            }
        });
    }
}
