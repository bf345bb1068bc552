package dev.lazarus.gateway.api;

import java.time.Duration;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;

/**
 * What a streamed answer's writer gets: a piece of the answer, or a tick while its first piece is still awaited.
 * A backend reading a long prompt on a CPU sends nothing for minutes, and a client gives up on a request whose
 * response has not begun (Claude Code sends it again, from the start); on a tick the writer begins the protocol's
 * stream (the headers and its opening events) and keeps it alive (Messages' {@code ping}). Until the first tick a
 * failure is still an HTTP error, and the backends of the route are tried in turn before and after it alike: the
 * ticks are the writer's, outside the attempt loop.
 */
public sealed interface Awaited<T> {

    /** A piece of the answer. */
    record Piece<T>(T value) implements Awaited<T> {}

    /** One more interval went by with no piece yet (one may still come just behind the first piece). */
    record Tick<T>() implements Awaited<T> {}

    /**
     * {@code pieces}, with a tick every {@code interval} until the first of them (or the stream's end) came; no
     * ticks for a zero interval. The pieces are asked for one at a time, as the writer asks for them.
     */
    static <T> Flux<Awaited<T>> ticking(Flux<T> pieces, Duration interval) {
        if (interval.isZero()) {
            return pieces.map(Piece::new);
        }
        return Flux.defer(() -> {
            Sinks.One<Boolean> first = Sinks.one();
            Flux<Awaited<T>> answer = pieces.doOnEach(signal -> first.tryEmitValue(true)).map(Piece::new);
            Flux<Awaited<T>> ticks = Flux.interval(interval, interval, Schedulers.parallel())
                    .onBackpressureDrop() // a client that takes nothing needs no tick
                    .takeUntilOther(first.asMono())
                    .map(n -> new Tick<>());
            return Flux.merge(1, answer, ticks);
        });
    }
}
