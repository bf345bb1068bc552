package dev.lazarus.gateway.routing;

import java.util.Comparator;
import java.util.List;
import reactor.core.publisher.Flux;

/**
 * Wraps one backend call without touching it: metering, circuit breakers, bulkheads. Every bean
 * of this type is applied to every attempt, at its {@link #layer()} (the order is stated once, in
 * {@link CallLayer}). A decorator may refuse a call by returning an error
 * ({@link dev.lazarus.backend.api.BackendException} with a kind whose
 * {@link dev.lazarus.backend.api.BackendErrorKind#tryNextBackend()} is true sends the request to
 * the next backend of the route).
 */
public interface BackendCallDecorator {

    <T> Flux<T> decorate(Attempt<T> attempt, Flux<T> call);

    /** Where this decorator wraps the call. */
    CallLayer layer();

    /**
     * Applies {@code decorators} in {@link CallLayer} order, the first layer the outermost; decorators
     * of one layer in the order given.
     */
    static BackendCallDecorator chain(List<? extends BackendCallDecorator> decorators) {
        List<BackendCallDecorator> copy = decorators.stream()
                .sorted(Comparator.comparing(BackendCallDecorator::layer))
                .map(BackendCallDecorator.class::cast)
                .toList();
        return new BackendCallDecorator() {
            @Override
            public <T> Flux<T> decorate(Attempt<T> attempt, Flux<T> call) {
                Flux<T> decorated = call;
                for (int i = copy.size() - 1; i >= 0; i--) {
                    decorated = copy.get(i).decorate(attempt, decorated);
                }
                return decorated;
            }

            @Override
            public CallLayer layer() {
                return copy.isEmpty() ? CallLayer.METERING : copy.getFirst().layer();
            }
        };
    }
}
