package dev.lazarus.gateway.policy;

import dev.lazarus.gateway.routing.Attempt;
import dev.lazarus.gateway.routing.BackendCallDecorator;
import dev.lazarus.gateway.routing.CallLayer;
import dev.lazarus.gateway.routing.PassThrough;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;

/**
 * What the policy needs to see of every backend call: how many are in flight (a draining backend
 * is drained when this reaches 0) and the errors, handed to the fatal-error rule.
 *
 * <p>A rule that fires writes the journal (a commit with an fsync): it runs on a worker thread,
 * not on the event loop that delivered the error and relays other clients' streams, and the error
 * travels on only once it has run, so the next attempt already sees the rolled-back state.
 */
public final class PolicyCallDecorator implements BackendCallDecorator {

    private final Map<String, AtomicInteger> inFlight = new ConcurrentHashMap<>();
    private final BiConsumer<String, Throwable> errors;

    /** @param errors receives (backend id, error) for every failed call */
    public PolicyCallDecorator(BiConsumer<String, Throwable> errors) {
        this.errors = errors;
    }

    @Override
    public CallLayer layer() {
        return CallLayer.POLICY;
    }

    @Override
    public <T> Flux<T> decorate(Attempt<T> attempt, Flux<T> call) {
        String id = attempt.backendId();
        AtomicInteger counter = inFlight.computeIfAbsent(id, k -> new AtomicInteger());
        return new Watched<>(call, id, counter, errors);
    }

    public int inFlight(String backendId) {
        AtomicInteger counter = inFlight.get(backendId);
        return counter == null ? 0 : counter.get();
    }

    /**
     * One call, counted in flight from its subscription to its end (or cancellation); an error passes on once the
     * rule has seen it on a worker thread. One operator where an {@code onErrorResume} (with a deferred rule, a
     * {@code subscribeOn} and a {@code then}) and a {@code tap} were two, per call.
     */
    private static final class Watched<T> extends Flux<T> {
        private final Flux<T> call;
        private final String backendId;
        private final AtomicInteger counter;
        private final BiConsumer<String, Throwable> errors;

        Watched(Flux<T> call, String backendId, AtomicInteger counter, BiConsumer<String, Throwable> errors) {
            this.call = call;
            this.backendId = backendId;
            this.counter = counter;
            this.errors = errors;
        }

        @Override
        public void subscribe(CoreSubscriber<? super T> actual) {
            counter.incrementAndGet();
            call.subscribe(new Relay<>(actual, this));
        }
    }

    private static final class Relay<T> extends PassThrough<T> {
        private final Watched<T> parent;
        private final AtomicBoolean ended = new AtomicBoolean();
        private volatile boolean cancelled;

        Relay(CoreSubscriber<? super T> actual, Watched<T> parent) {
            super(actual);
            this.parent = parent;
        }

        @Override
        public void onError(Throwable error) {
            try {
                Schedulers.boundedElastic().schedule(() -> {
                    try {
                        parent.errors.accept(parent.backendId, error);
                    } finally {
                        failed(error);
                    }
                });
            } catch (RejectedExecutionException shuttingDown) {
                failed(error);
            }
        }

        private void failed(Throwable error) {
            if (!cancelled) {
                actual.onError(error);
            }
            end();
        }

        @Override
        public void onComplete() {
            actual.onComplete();
            end();
        }

        @Override
        public void cancel() {
            cancelled = true;
            upstream.cancel();
            end();
        }

        private void end() {
            if (ended.compareAndSet(false, true)) {
                parent.counter.decrementAndGet();
            }
        }
    }
}
