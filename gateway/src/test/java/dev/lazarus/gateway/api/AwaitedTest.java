package dev.lazarus.gateway.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** The ticks a streamed answer's writer gets while the first piece is awaited, and only then. */
class AwaitedTest {

    private static final Duration INTERVAL = Duration.ofMillis(100);

    @Test
    void ticksUntilTheFirstPieceThenThePiecesAsTheyCame() {
        Flux<String> late = Mono.delay(Duration.ofMillis(550)).thenMany(Flux.just("a", "b"));
        List<Awaited<String>> seen = Awaited.ticking(late, INTERVAL).concatMap(Mono::just, 1)
                .collectList().block(Duration.ofSeconds(10));
        List<Awaited<String>> pieces = seen.stream().filter(a -> a instanceof Awaited.Piece<String>).toList();
        assertThat(pieces).containsExactly(new Awaited.Piece<>("a"), new Awaited.Piece<>("b"));
        int first = seen.indexOf(new Awaited.Piece<>("a"));
        assertThat(first).as("ticks before the first piece: %s", seen).isGreaterThanOrEqualTo(3);
        assertThat(seen.subList(first, seen.size()).stream().filter(a -> a instanceof Awaited.Tick<String>).count())
                .as("at most one tick behind the first piece").isLessThanOrEqualTo(1);
    }

    @Test
    void anAnswerThatComesAtOnceGetsNoTickAndAZeroIntervalNone() {
        assertThat(Awaited.ticking(Flux.just("a"), INTERVAL).collectList().block(Duration.ofSeconds(5)))
                .containsExactly(new Awaited.Piece<>("a"));
        Flux<String> late = Mono.delay(Duration.ofMillis(350)).thenMany(Flux.just("a"));
        assertThat(Awaited.ticking(late, Duration.ZERO).collectList().block(Duration.ofSeconds(5)))
                .containsExactly(new Awaited.Piece<>("a"));
    }

    @Test
    void aFailureBeforeTheFirstPieceEndsTheTicks() {
        Flux<String> failing = Mono.delay(Duration.ofMillis(250)).then(Mono.<String>error(new IllegalStateException("down"))).flux();
        List<Object> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
        Throwable error = Awaited.ticking(failing, INTERVAL).doOnNext(seen::add).then().materialize()
                .block(Duration.ofSeconds(5)).getThrowable();
        assertThat(error).hasMessage("down");
        assertThat(seen).isNotEmpty().allMatch(a -> a instanceof Awaited.Tick<?>);
    }
}
