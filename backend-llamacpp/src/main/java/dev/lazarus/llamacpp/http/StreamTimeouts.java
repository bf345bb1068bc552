package dev.lazarus.llamacpp.http;

import dev.lazarus.backend.api.BackendException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Scheduler;

/**
 * The time limits of one upstream event stream: the first event within {@code first} of the
 * subscription, then no gap longer than {@code idle} between two events.
 *
 * <p>One timer per stream, not one per event: an event only notes the time it came; the timer,
 * when it fires, looks how long ago the last event came and sets itself again for the time left.
 * While no event has come it fires at least every {@code idle}, so a stall right after the first
 * event is caught on time. A stream shorter than both limits schedules one timer and cancels it.
 */
final class StreamTimeouts {

    private final Duration first;
    private final Duration idle;
    private final Scheduler timer;
    /** Who is late, for the messages: llama-server, or the OpenAI-compatible server. */
    private final String server;

    StreamTimeouts(Duration first, Duration idle, Scheduler timer) {
        this(first, idle, timer, "llama-server");
    }

    StreamTimeouts(Duration first, Duration idle, Scheduler timer, String server) {
        this.server = server;
        this.first = first;
        this.idle = idle;
        this.timer = timer;
    }

    /** {@code events}, failing with a TIMEOUT {@link BackendException} when a limit is exceeded. */
    <T> Flux<T> apply(Flux<T> events) {
        return apply(events, event -> false);
    }

    /** As {@link #apply(Flux)}, where an item that {@code progressOnly} accepts is progress, not an event. */
    <T> Flux<T> apply(Flux<T> events, Predicate<? super T> progressOnly) {
        return Flux.defer(() -> {
            Watch watch = new Watch(now());
            return events.doOnNext(event -> watch.event(progressOnly.test(event)))
                    .doOnRequest(watch::requested)
                    .takeUntilOther(watch.expiry(Math.min(first.toNanos(), idle.toNanos())))
                    .concatWith(Mono.defer(() -> watch.failure == null ? Mono.empty() : Mono.error(watch.failure)));
        });
    }

    private long now() {
        return timer.now(TimeUnit.NANOSECONDS);
    }

    /** One stream's clock: when it started, when its last event came (NONE before the first). */
    private final class Watch {
        private static final long NONE = Long.MIN_VALUE;

        /** When the wait for the first event began: the subscription, or the last progress before the first event. */
        private volatile long start;
        private volatile long lastEvent = NONE;
        private volatile BackendException failure;
        /** Events asked for and not yet come (Long.MAX_VALUE: unbounded). */
        private final AtomicLong demand = new AtomicLong();

        Watch(long start) {
            this.start = start;
        }

        void event(boolean progress) {
            if (progress && lastEvent == NONE) {
                start = now();
            } else {
                lastEvent = now();
            }
            demand.getAndUpdate(d -> d == Long.MAX_VALUE || d == 0 ? d : d - 1);
        }

        void requested(long n) {
            long before = demand.getAndUpdate(d -> Operators.addCap(d, n));
            if (before == 0 && lastEvent != NONE) {
                // the consumer is back: the server's gap starts now
                lastEvent = now();
            }
        }

        /** Fires (emits) once a limit is exceeded; the failure is then set. */
        Mono<Boolean> expiry(long delayNanos) {
            return Mono.delay(Duration.ofNanos(Math.max(0, delayNanos)), timer).flatMap(tick -> check());
        }

        private Mono<Boolean> check() {
            long last = lastEvent;
            long left = last == NONE
                    ? start + first.toNanos() - now()
                    : last + idle.toNanos() - now();
            if (left <= 0 && last != NONE && demand.get() == 0) {
                // nothing asked for: the consumer is the slow one, not the server
                return expiry(idle.toNanos());
            }
            if (left > 0) {
                return expiry(last == NONE ? Math.min(left, idle.toNanos()) : left);
            }
            failure = last == NONE
                    ? BackendException.timeout("no first token from " + server + " within " + first)
                    : BackendException.timeout(server + " stalled: no chunk for " + idle);
            return Mono.just(true);
        }
    }
}
