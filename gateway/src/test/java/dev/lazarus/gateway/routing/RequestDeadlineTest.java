package dev.lazarus.gateway.routing;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/**
 * The request's overall deadline (one operator since the relay's profile): the request is cancelled and fails at
 * the deadline wherever it is, before or after its first chunk; one that ends in time passes as it is; its
 * subscribers see the time left in their context.
 */
class RequestDeadlineTest {

    private static final Duration LIMIT = Duration.ofSeconds(10);

    private static Flux<String> bound(Flux<String> source) {
        return RequestDeadline.bound(source, LIMIT, Schedulers.parallel(), () -> new IllegalStateException("late"));
    }

    @Test
    void aRequestStillGoingAtTheDeadlineIsCancelledAndFails() {
        AtomicBoolean cancelled = new AtomicBoolean();
        StepVerifier.withVirtualTime(() -> bound(Flux.concat(Flux.just("a"), Flux.<String>never())
                        .doOnCancel(() -> cancelled.set(true))))
                .expectSubscription()
                .expectNext("a")
                .expectNoEvent(LIMIT.minusMillis(1))
                .thenAwait(Duration.ofMillis(1))
                .expectErrorMessage("late")
                .verify(Duration.ofSeconds(5));
        assertThat(cancelled).isTrue();
    }

    @Test
    void aRequestThatEndsInTimePassesAsItIsAndDisarmsTheTimer() {
        StepVerifier.withVirtualTime(() -> bound(Flux.just("a", "b").delayElements(Duration.ofSeconds(4))))
                .expectSubscription()
                .thenAwait(Duration.ofSeconds(8))
                .expectNext("a", "b")
                .expectComplete()
                .verify(Duration.ofSeconds(5));
        StepVerifier.withVirtualTime(() -> bound(Flux.error(new IllegalArgumentException("own"))))
                .expectErrorMessage("own")
                .verify(Duration.ofSeconds(5));
    }

    @Test
    void theSourceSeesTheTimeLeftInItsContext() {
        AtomicReference<Duration> left = new AtomicReference<>();
        bound(Flux.deferContextual(context -> {
            left.set(RequestDeadline.remaining(context));
            return Mono.just("a");
        })).blockLast(Duration.ofSeconds(5));
        assertThat(left.get()).isNotNull().isPositive().isLessThanOrEqualTo(LIMIT);
        assertThat(RequestDeadline.remaining(reactor.util.context.Context.empty())).isNull();
    }
}
