package dev.lazarus.llamacpp.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.backend.api.BackendErrorKind;
import dev.lazarus.backend.api.BackendException;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

class StreamTimeoutsTest {

    private static final Duration FIRST = Duration.ofSeconds(120);
    private static final Duration IDLE = Duration.ofSeconds(30);

    private final VirtualTimeScheduler time = VirtualTimeScheduler.create();
    private final StreamTimeouts timeouts = new StreamTimeouts(FIRST, IDLE, time);

    private static boolean timeout(Throwable e, String words) {
        return e instanceof BackendException be && be.kind() == BackendErrorKind.TIMEOUT && be.getMessage().contains(words);
    }

    @Test
    void noFirstEventWithinTheFirstLimitFailsThen() {
        Sinks.Many<String> events = Sinks.many().unicast().onBackpressureBuffer();
        StepVerifier.withVirtualTime(() -> timeouts.apply(events.asFlux()), () -> time, Long.MAX_VALUE)
                .expectSubscription()
                .expectNoEvent(FIRST.minusMillis(1))
                .thenAwait(Duration.ofMillis(1))
                .expectErrorMatches(e -> timeout(e, "no first token"))
                .verify(Duration.ofSeconds(5));
    }

    /** Progress before the first event (a long prompt being read) starts the first limit again, even past the idle one. */
    @Test
    void progressBeforeTheFirstEventStartsTheFirstLimitAgain() {
        Sinks.Many<String> events = Sinks.many().unicast().onBackpressureBuffer();
        StepVerifier.withVirtualTime(() -> timeouts.apply(events.asFlux(), ""::equals), () -> time, Long.MAX_VALUE)
                .expectSubscription()
                .thenAwait(FIRST.minusSeconds(10))
                .then(() -> events.tryEmitNext(""))
                .expectNext("")
                .thenAwait(FIRST.minusSeconds(10))
                .then(() -> events.tryEmitNext(""))
                .expectNext("")
                .expectNoEvent(FIRST.minusMillis(1)) // 3 first limits since the start, and no failure yet
                .thenAwait(Duration.ofMillis(1))
                .expectErrorMatches(e -> timeout(e, "no first token"))
                .verify(Duration.ofSeconds(5));
    }

    @Test
    void aStallRightAfterTheFirstEventFailsOneIdleLimitLater() {
        Sinks.Many<String> events = Sinks.many().unicast().onBackpressureBuffer();
        StepVerifier.withVirtualTime(() -> timeouts.apply(events.asFlux()), () -> time, Long.MAX_VALUE)
                .expectSubscription()
                .thenAwait(Duration.ofSeconds(50))
                .then(() -> events.tryEmitNext("a"))
                .expectNext("a")
                .expectNoEvent(IDLE.minusMillis(1))
                .thenAwait(Duration.ofMillis(1))
                .expectErrorMatches(e -> timeout(e, "stalled"))
                .verify(Duration.ofSeconds(5));
    }

    @Test
    void eventsWithinTheIdleLimitKeepTheStreamAliveForAnyLength() {
        Sinks.Many<String> events = Sinks.many().unicast().onBackpressureBuffer();
        StepVerifier.Step<String> step = StepVerifier.withVirtualTime(() -> timeouts.apply(events.asFlux()), () -> time, Long.MAX_VALUE)
                .expectSubscription();
        for (int i = 0; i < 10; i++) {
            step = step.thenAwait(IDLE.minusSeconds(1)).then(() -> events.tryEmitNext("x")).expectNext("x");
        }
        for (int i = 0; i < 200; i++) {
            step = step.thenAwait(Duration.ofSeconds(1)).then(() -> events.tryEmitNext("y")).expectNext("y");
        }
        step.then(events::tryEmitComplete)
                .verifyComplete();
        // one timer per idle limit that passed (about 490 s / 30 s), not one per event
        assertThat(time.getScheduledTaskCount()).isBetween(10L, 25L);
    }

    @Test
    void aShortStreamSetsOneTimer() {
        StepVerifier.withVirtualTime(() -> timeouts.apply(Flux.just("a", "b", "c")), () -> time, Long.MAX_VALUE)
                .expectNext("a", "b", "c")
                .verifyComplete();
        assertThat(time.getScheduledTaskCount()).isEqualTo(1);
    }

    /** Issue 35: a client that stops reading stops the demand; the server is not "stalled" meanwhile. */
    @Test
    void noDemandPausesTheIdleClockAndItsReturnRestartsIt() {
        Sinks.Many<String> events = Sinks.many().unicast().onBackpressureBuffer();
        StepVerifier.withVirtualTime(() -> timeouts.apply(events.asFlux()), () -> time, 1)
                .expectSubscription()
                .then(() -> events.tryEmitNext("a"))
                .expectNext("a")
                // the server would go on; nobody asks: ten idle limits pass without a failure
                .then(() -> events.tryEmitNext("b"))
                .expectNoEvent(IDLE.multipliedBy(10))
                .thenRequest(1)
                .expectNext("b")
                // asked again and the server is silent: stalled one idle limit after the request
                .thenRequest(1)
                .expectNoEvent(IDLE.minusMillis(1))
                .thenAwait(Duration.ofMillis(1))
                .expectErrorMatches(e -> timeout(e, "stalled"))
                .verify(Duration.ofSeconds(5));
    }
}
