package dev.lazarus.gateway.routing;

import java.time.Duration;
import java.util.function.Supplier;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxOperator;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Scheduler;
import reactor.util.context.Context;
import reactor.util.context.ContextView;

/**
 * When the request's overall time is up, carried in the Reactor context of its attempts so that a
 * decorator that waits (a retry after {@code Retry-After}) never waits past it; and the operator that
 * ends the request there ({@link #bound}).
 */
public final class RequestDeadline {

    private static final String KEY = RequestDeadline.class.getName();

    private RequestDeadline() {
    }

    /** The time left, or null when the request has no deadline (a call made outside the router). */
    public static Duration remaining(ContextView context) {
        Long deadline = context.getOrDefault(KEY, null);
        return deadline == null ? null : Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
    }

    /**
     * {@code source} within {@code timeout} of its subscription: then it is cancelled and fails with
     * {@code error}; its subscribers' context holds the deadline. One operator and one timer, where
     * {@code takeUntilOther(Mono.delay(..).then(Mono.error(..))).contextWrite(..)} took five operators and
     * the delay's own subscribers per request.
     */
    static <T> Flux<T> bound(Flux<T> source, Duration timeout, Scheduler timer, Supplier<? extends Throwable> error) {
        return new Bounded<>(source, timeout, timer, error);
    }

    private static final class Bounded<T> extends FluxOperator<T, T> {
        private final Duration timeout;
        private final Scheduler timer;
        private final Supplier<? extends Throwable> error;

        Bounded(Flux<T> source, Duration timeout, Scheduler timer, Supplier<? extends Throwable> error) {
            super(source);
            this.timeout = timeout;
            this.timer = timer;
            this.error = error;
        }

        @Override
        public void subscribe(CoreSubscriber<? super T> actual) {
            // serialised: the timer may fire on another thread than the source's signals
            source.subscribe(new Watch<>(Operators.serialize(actual), this));
        }
    }

    private static final class Watch<T> extends TimedPassThrough<T> {

        private final Bounded<T> parent;
        private final Context context;

        Watch(CoreSubscriber<? super T> actual, Bounded<T> parent) {
            super(actual, parent.timer, parent.timeout.toNanos());
            this.parent = parent;
            this.context = actual.currentContext().put(KEY, System.nanoTime() + parent.timeout.toNanos());
        }

        @Override
        public Context currentContext() {
            return context;
        }

        @Override
        protected Throwable timedOut() {
            return parent.error.get();
        }

        @Override
        public void onNext(T t) {
            if (open()) {
                actual.onNext(t);
            } else {
                Operators.onDiscard(t, context);
            }
        }

        @Override
        public void onError(Throwable t) {
            if (won()) {
                actual.onError(t);
            } else {
                Operators.onErrorDropped(t, context);
            }
        }

        @Override
        public void onComplete() {
            if (won()) {
                actual.onComplete();
            }
        }
    }
}
