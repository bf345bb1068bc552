package dev.lazarus.gateway.policy;

import dev.lazarus.gateway.routing.Attempt;
import dev.lazarus.gateway.routing.BackendCallDecorator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import reactor.core.observability.DefaultSignalListener;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;
import reactor.core.scheduler.Schedulers;

/**
 * What the policy needs to see of every backend call: how many are in flight (a draining backend
 * is drained when this reaches 0) and the errors, handed to the fatal-error rule.
 *
 * <p>A rule that fires writes the journal (a commit with an fsync): it runs on a worker thread,
 * not on the event loop that delivered the error and relays other clients' streams, and the error
 * travels on only once it has run, so the next attempt already sees the rolled-back state.
 */
public final class PolicyCallDecorator implements BackendCallDecorator {

    private final Map<String, AtomicInteger> inFlight = new ConcurrentHashMap<>();
    private final BiConsumer<String, Throwable> errors;

    /** @param errors receives (backend id, error) for every failed call */
    public PolicyCallDecorator(BiConsumer<String, Throwable> errors) {
        this.errors = errors;
    }

    @Override
    public <T> Flux<T> decorate(Attempt<T> attempt, Flux<T> call) {
        String id = attempt.backendId();
        AtomicInteger counter = inFlight.computeIfAbsent(id, k -> new AtomicInteger());
        // The in-flight count in one operator (tap: counted as the call is subscribed, until it ends).
        return call.onErrorResume(error -> Mono.fromRunnable(() -> errors.accept(id, error))
                        .subscribeOn(Schedulers.boundedElastic())
                        .then(Mono.<T>error(error)))
                .tap(() -> new DefaultSignalListener<T>() {
                    @Override
                    public void doFirst() {
                        counter.incrementAndGet();
                    }

                    @Override
                    public void doFinally(SignalType signal) {
                        counter.decrementAndGet();
                    }
                });
    }

    public int inFlight(String backendId) {
        AtomicInteger counter = inFlight.get(backendId);
        return counter == null ? 0 : counter.get();
    }
}
