package dev.lazarus.gateway.routing;

import java.util.List;
import reactor.core.publisher.Flux;

/**
 * Wraps one backend call without touching it: metering, circuit breakers, bulkheads. Every bean
 * of this type is applied to every attempt, in {@link org.springframework.core.annotation.Order}
 * order, the first being the outermost. A decorator may refuse a call by returning an error
 * ({@link dev.lazarus.backend.api.BackendException} with a kind whose
 * {@link dev.lazarus.backend.api.BackendErrorKind#tryNextBackend()} is true sends the request to
 * the next backend of the route).
 */
public interface BackendCallDecorator {

    <T> Flux<T> decorate(Attempt<T> attempt, Flux<T> call);

    /** Applies {@code decorators} so that the first one is the outermost. */
    static BackendCallDecorator chain(List<? extends BackendCallDecorator> decorators) {
        List<BackendCallDecorator> copy = List.copyOf(decorators);
        return new BackendCallDecorator() {
            @Override
            public <T> Flux<T> decorate(Attempt<T> attempt, Flux<T> call) {
                Flux<T> decorated = call;
                for (int i = copy.size() - 1; i >= 0; i--) {
                    decorated = copy.get(i).decorate(attempt, decorated);
                }
                return decorated;
            }
        };
    }
}
