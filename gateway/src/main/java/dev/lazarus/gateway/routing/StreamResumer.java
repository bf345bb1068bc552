package dev.lazarus.gateway.routing;

import reactor.core.publisher.Flux;

/**
 * What to do when a backend fails mid-stream. The default ends the stream with the error (the
 * client sees an error event); mid-stream failover replaces it with one that continues the answer
 * on a remaining backend. Declaring a bean of this type replaces the default.
 */
public interface StreamResumer {

    /** The continuation of the stream, or an error to end it with. */
    <R, T> Flux<T> resume(MidStreamFailure<R, T> failure);

    static StreamResumer none() {
        return new StreamResumer() {
            @Override
            public <R, T> Flux<T> resume(MidStreamFailure<R, T> failure) {
                return Flux.error(failure.cause());
            }
        };
    }
}
