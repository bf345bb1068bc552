package dev.lazarus.gateway.resilience;

import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.function.Supplier;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxOperator;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Scheduler;
import reactor.util.context.Context;

/**
 * A flux that fails with {@code error} when its source signals nothing (no item, no end) within
 * {@code limit} of being subscribed, cancelling the source; from its first signal on it passes
 * everything through. This is Reactor's {@code timeout(Mono.delay(limit), item -> Mono.never(), error)}
 * without that operator's cost per item: it subscribes a new (never-ending) timeout to every item and
 * keeps switching subscriptions, for a limit that only ever applies to the first.
 */
final class FirstSignalTimeout<T> extends FluxOperator<T, T> {

    private final Duration limit;
    private final Scheduler timer;
    private final Supplier<? extends Throwable> error;

    FirstSignalTimeout(Flux<? extends T> source, Duration limit, Scheduler timer, Supplier<? extends Throwable> error) {
        super(source);
        this.limit = limit;
        this.timer = timer;
        this.error = error;
    }

    @Override
    public void subscribe(CoreSubscriber<? super T> actual) {
        source.subscribe(new Watch<>(actual, this));
    }

    private static final class Watch<T> implements CoreSubscriber<T>, Subscription, Runnable {

        private static final int WAITING = 0;
        private static final int SIGNALLED = 1;
        private static final int TIMED_OUT = 2;
        private static final AtomicIntegerFieldUpdater<Watch> STATE =
                AtomicIntegerFieldUpdater.newUpdater(Watch.class, "state");

        private final CoreSubscriber<? super T> actual;
        private final FirstSignalTimeout<T> parent;
        /** The armed timer: disposed at the first signal, also when that comes before it is armed. */
        private final Disposable.Swap armed = Disposables.swap();
        private volatile int state;
        /** Set on the source's (serialised) signals once the first one has won: later ones pass straight on. */
        private boolean through;
        private Subscription upstream;

        Watch(CoreSubscriber<? super T> actual, FirstSignalTimeout<T> parent) {
            this.actual = actual;
            this.parent = parent;
        }

        @Override
        public Context currentContext() {
            return actual.currentContext();
        }

        @Override
        public void onSubscribe(Subscription s) {
            if (!Operators.validate(upstream, s)) {
                return;
            }
            upstream = s;
            actual.onSubscribe(this);
            if (state != WAITING) {
                return; // a signal already came while the subscriber requested
            }
            try {
                armed.update(parent.timer.schedule(this, parent.limit.toNanos(), TimeUnit.NANOSECONDS));
            } catch (RejectedExecutionException e) {
                if (STATE.compareAndSet(this, WAITING, TIMED_OUT)) {
                    upstream.cancel();
                    actual.onError(Operators.onRejectedExecution(e, actual.currentContext()));
                }
            }
        }

        /** True where this signal (the source's) may pass: the first one wins over the timer. */
        private boolean passes() {
            if (through) {
                return true;
            }
            if (!STATE.compareAndSet(this, WAITING, SIGNALLED)) {
                return false;
            }
            armed.dispose();
            through = true;
            return true;
        }

        @Override
        public void onNext(T t) {
            if (passes()) {
                actual.onNext(t);
            } else {
                Operators.onDiscard(t, actual.currentContext());
            }
        }

        @Override
        public void onError(Throwable t) {
            if (passes()) {
                actual.onError(t);
            } else {
                Operators.onErrorDropped(t, actual.currentContext());
            }
        }

        @Override
        public void onComplete() {
            if (passes()) {
                actual.onComplete();
            }
        }

        /** The limit passed with no signal from the source. */
        @Override
        public void run() {
            if (STATE.compareAndSet(this, WAITING, TIMED_OUT)) {
                upstream.cancel();
                actual.onError(parent.error.get());
            }
        }

        @Override
        public void request(long n) {
            upstream.request(n);
        }

        @Override
        public void cancel() {
            armed.dispose();
            upstream.cancel();
        }
    }
}
