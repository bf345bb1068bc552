package dev.lazarus.gateway.routing;

import java.util.function.Function;
import java.util.function.Supplier;
import org.reactivestreams.Publisher;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Operators;

/**
 * One backend call as the attempt loop makes it, each time it is subscribed (a retry subscribes it again): the
 * backend's method called then (one that throws instead of signalling fails the call the same way), its failures
 * redacted before any decorator sees them, and the upstream's time to its first signal taken for the request's
 * clock. One operator where a defer, an {@code onErrorMap} and a {@code tap} were three, per call.
 */
final class UpstreamCall<T> extends Flux<T> {

    /** What the request's clock is told; null in a continuation (its first chunk is not the request's). */
    interface Clock {
        void callStarted();

        void answered();
    }

    private final Supplier<? extends Publisher<T>> call;
    private final Function<Throwable, ? extends Throwable> redact;
    private final Clock clock;

    UpstreamCall(Supplier<? extends Publisher<T>> call, Function<Throwable, ? extends Throwable> redact, Clock clock) {
        this.call = call;
        this.redact = redact;
        this.clock = clock;
    }

    @Override
    public void subscribe(CoreSubscriber<? super T> actual) {
        if (clock != null) {
            clock.callStarted();
        }
        Publisher<T> source;
        try {
            source = call.get();
        } catch (Throwable e) {
            if (clock != null) {
                clock.answered();
            }
            Operators.error(actual, redact.apply(Operators.onOperatorError(e, actual.currentContext())));
            return;
        }
        source.subscribe(new Relay<>(actual, this));
    }

    private static final class Relay<T> extends PassThrough<T> {
        private final UpstreamCall<T> parent;
        private boolean answered;

        Relay(CoreSubscriber<? super T> actual, UpstreamCall<T> parent) {
            super(actual);
            this.parent = parent;
        }

        private void answered() {
            if (!answered) {
                answered = true;
                if (parent.clock != null) {
                    parent.clock.answered();
                }
            }
        }

        @Override
        public void onNext(T t) {
            answered();
            actual.onNext(t);
        }

        @Override
        public void onError(Throwable t) {
            answered();
            Throwable redacted;
            try {
                redacted = parent.redact.apply(t);
            } catch (Throwable e) {
                redacted = Operators.onOperatorError(upstream, e, t, actual.currentContext());
            }
            actual.onError(redacted);
        }
    }
}
