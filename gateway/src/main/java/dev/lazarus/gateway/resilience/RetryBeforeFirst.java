package dev.lazarus.gateway.resilience;

import dev.lazarus.gateway.routing.Attempt;
import dev.lazarus.gateway.routing.PassThrough;
import dev.lazarus.gateway.routing.RequestDeadline;
import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.reactivestreams.Subscription;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Schedulers;

/**
 * {@link SameBackendRetryDecorator}'s retries as one operator: the call is subscribed again, after the wait its
 * failure calls for, as long as nothing of it went downstream and tries are left; the request's deadline
 * ({@link RequestDeadline}) bounds the wait. Where a defer, a peek and an {@code onErrorResume} were three operators
 * per call.
 */
final class RetryBeforeFirst<T> extends Flux<T> {

    private static final Logger log = LoggerFactory.getLogger(SameBackendRetryDecorator.class);

    private final Flux<T> call;
    private final Attempt<T> attempt;
    private final AttemptProperties.Policy policy;

    RetryBeforeFirst(Flux<T> call, Attempt<T> attempt, AttemptProperties.Policy policy) {
        this.call = call;
        this.attempt = attempt;
        this.policy = policy;
    }

    @Override
    public void subscribe(CoreSubscriber<? super T> actual) {
        Tries<T> tries = new Tries<>(actual, this);
        actual.onSubscribe(tries);
        tries.next();
    }

    /** Not one source but a call subscribed again: its own (volatile) subscription, the demand so far kept. */
    private static final class Tries<T> extends PassThrough<T> implements Runnable {
        private final RetryBeforeFirst<T> parent;
        /** All the demand so far: a new try is asked for all of it (nothing of an earlier one went downstream). */
        private final AtomicLong requested = new AtomicLong();
        private final Disposable.Swap waiting = Disposables.swap();
        private volatile Subscription current;
        private volatile boolean cancelled;
        private boolean relayed;
        private int retried;

        Tries(CoreSubscriber<? super T> actual, RetryBeforeFirst<T> parent) {
            super(actual);
            this.parent = parent;
        }

        /** Subscribes the call (again). */
        void next() {
            if (!cancelled) {
                parent.call.subscribe(this);
            }
        }

        @Override
        public void run() {
            next();
        }

        @Override
        public void onSubscribe(Subscription s) {
            current = s;
            if (cancelled) {
                s.cancel();
                return;
            }
            long demand = requested.get();
            if (demand > 0) {
                s.request(demand);
            }
        }

        @Override
        public void onNext(T t) {
            relayed = true;
            actual.onNext(t);
        }

        @Override
        public void onError(Throwable error) {
            Duration wait = relayed || retried >= parent.policy.retries() ? null
                    : SameBackendRetryDecorator.waitBefore(error, parent.policy, retried);
            Duration left = wait == null ? null : RequestDeadline.remaining(actual.currentContext());
            if (wait == null || (left != null && wait.compareTo(left) >= 0) || cancelled) {
                actual.onError(error);
                return;
            }
            log.info("model '{}': backend '{}' failed before its first token ({}); trying it again in {} ms",
                    parent.attempt.model(), parent.attempt.backendId(), error.getMessage(), wait.toMillis());
            retried++;
            try {
                waiting.update(Schedulers.parallel().schedule(this, wait.toNanos(), TimeUnit.NANOSECONDS));
            } catch (RejectedExecutionException e) {
                actual.onError(Operators.onRejectedExecution(e, actual.currentContext()));
            }
        }

        @Override
        public void request(long n) {
            if (Operators.validate(n)) {
                requested.accumulateAndGet(n, Operators::addCap);
                Subscription s = current;
                if (s != null) {
                    s.request(n);
                }
            }
        }

        @Override
        public void cancel() {
            cancelled = true;
            waiting.dispose();
            Subscription s = current;
            if (s != null) {
                s.cancel();
            }
        }
    }
}
