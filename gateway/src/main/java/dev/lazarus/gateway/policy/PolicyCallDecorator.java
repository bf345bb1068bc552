package dev.lazarus.gateway.policy;

import dev.lazarus.gateway.routing.Attempt;
import dev.lazarus.gateway.routing.BackendCallDecorator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import reactor.core.publisher.Flux;

/**
 * What the policy needs to see of every backend call: how many are in flight (a draining backend
 * is drained when this reaches 0) and the errors, handed to the fatal-error rule.
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
        return Flux.defer(() -> {
            AtomicInteger counter = inFlight.computeIfAbsent(id, k -> new AtomicInteger());
            counter.incrementAndGet();
            return call.doOnError(error -> errors.accept(id, error))
                    .doFinally(signal -> counter.decrementAndGet());
        });
    }

    public int inFlight(String backendId) {
        AtomicInteger counter = inFlight.get(backendId);
        return counter == null ? 0 : counter.get();
    }
}
