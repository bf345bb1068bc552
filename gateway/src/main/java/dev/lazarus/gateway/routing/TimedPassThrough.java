package dev.lazarus.gateway.routing;

import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Scheduler;

/**
 * A {@link PassThrough} that races a timer armed at its subscription: whichever comes first, a signal of the
 * source that the subclass {@link #won} with or the timer, decides once. When the timer wins, the source is
 * cancelled and the subscriber fails with {@link #timedOut()}. The first-signal limit and the request's deadline
 * are this race with different signals that end it.
 */
public abstract class TimedPassThrough<T> extends PassThrough<T> implements Runnable {

    private static final int OPEN = 0;
    private static final int WON = 1;
    private static final int TIMED_OUT = 2;
    @SuppressWarnings("rawtypes")
    private static final AtomicIntegerFieldUpdater<TimedPassThrough> STATE =
            AtomicIntegerFieldUpdater.newUpdater(TimedPassThrough.class, "state");

    private final Scheduler timer;
    private final long limitNanos;
    /** The armed timer: disposed when the race is won, also when that happens before it is armed. */
    private final Disposable.Swap armed = Disposables.swap();
    private volatile int state;

    protected TimedPassThrough(CoreSubscriber<? super T> actual, Scheduler timer, long limitNanos) {
        super(actual);
        this.timer = timer;
        this.limitNanos = limitNanos;
    }

    /** The error the subscriber gets when the timer wins. */
    protected abstract Throwable timedOut();

    @Override
    protected final void subscribed() {
        if (state != OPEN) {
            return; // the race was decided while the subscriber requested
        }
        try {
            armed.update(timer.schedule(this, limitNanos, TimeUnit.NANOSECONDS));
        } catch (RejectedExecutionException e) {
            if (STATE.compareAndSet(this, OPEN, TIMED_OUT)) {
                upstream.cancel();
                actual.onError(Operators.onRejectedExecution(e, currentContext()));
            }
        }
    }

    /**
     * Arms the timer again for the whole limit from now, while neither side has won (the source showed it is alive
     * without a signal of its own); the timer armed before is disarmed. Once the race is decided, nothing.
     */
    protected final void restart() {
        if (state != OPEN) {
            return;
        }
        try {
            armed.update(timer.schedule(this, limitNanos, TimeUnit.NANOSECONDS));
        } catch (RejectedExecutionException e) {
            // the timer armed before stays: the limit then counts from the start, as without the restart
        }
    }

    /** True while neither side has won. */
    protected final boolean open() {
        return state == OPEN;
    }

    /** Ends the race for the source (the timer disarmed); false where the timer won first, or the source already did. */
    protected final boolean won() {
        if (!STATE.compareAndSet(this, OPEN, WON)) {
            return false;
        }
        armed.dispose();
        return true;
    }

    /** The timer. */
    @Override
    public final void run() {
        if (STATE.compareAndSet(this, OPEN, TIMED_OUT)) {
            upstream.cancel();
            actual.onError(timedOut());
        }
    }

    @Override
    public void cancel() {
        armed.dispose();
        upstream.cancel();
    }
}
