package dev.lazarus.gateway.resilience;

import dev.lazarus.backend.api.CallContext;
import dev.lazarus.backend.api.PrefillProgress;
import dev.lazarus.gateway.routing.TimedPassThrough;
import java.time.Duration;
import java.util.function.Supplier;
import reactor.core.CoreSubscriber;
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
 *
 * <p>A source that tells its {@link PrefillProgress} (in its subscriber context) that it is reading the prompt starts
 * the limit again each time: then it bounds the wait without progress, not the prompt's whole reading. Progress is
 * no signal: the first item is still the one that ends the limit.
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

    private static final class Watch<T> extends TimedPassThrough<T> {

        private final FirstSignalTimeout<T> parent;
        private final Context context;
        /** Set on the source's (serialised) signals once the first one has won: later ones pass straight on. */
        private boolean through;

        Watch(CoreSubscriber<? super T> actual, FirstSignalTimeout<T> parent) {
            super(actual, parent.timer, parent.limit.toNanos());
            this.parent = parent;
            this.context = CallContext.withPrefillProgress(actual.currentContext(), (processed, total) -> restart());
        }

        @Override
        public Context currentContext() {
            return context;
        }

        @Override
        protected Throwable timedOut() {
            return parent.error.get();
        }

        /** True where this signal (the source's) may pass: the first one wins over the timer. */
        private boolean passes() {
            if (!through && !won()) {
                return false;
            }
            through = true;
            return true;
        }

        @Override
        public void onNext(T t) {
            if (passes()) {
                actual.onNext(t);
            } else {
                Operators.onDiscard(t, currentContext());
            }
        }

        @Override
        public void onError(Throwable t) {
            if (passes()) {
                actual.onError(t);
            } else {
                Operators.onErrorDropped(t, currentContext());
            }
        }

        @Override
        public void onComplete() {
            if (passes()) {
                actual.onComplete();
            }
        }
    }
}
