package dev.lazarus.gateway.routing;

import dev.lazarus.backend.api.WholeAnswer;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A routed answer in the form the {@link Router} chose for it: the API layer writes each form with an
 * exhaustive {@code switch}, and never decides the form itself.
 *
 * @param <S> what a streamed answer's pieces are
 * @param <C> the chunks a non-streaming answer is put together from
 */
public sealed interface Answer<S, C> {

    /** A non-streaming answer that every backend of the route gives whole: passed on as it came. */
    record Whole<S, C>(Mono<WholeAnswer> answer) implements Answer<S, C> {}

    /** A streamed answer, for the client's event stream. */
    record Streamed<S, C>(Flux<S> pieces) implements Answer<S, C> {}

    /** A non-streaming answer its backends stream: the chunks to put together into one. */
    record Aggregated<S, C>(Flux<C> chunks) implements Answer<S, C> {}
}
