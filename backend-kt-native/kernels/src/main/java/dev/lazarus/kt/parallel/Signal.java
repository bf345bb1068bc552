package dev.lazarus.kt.parallel;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.LockSupport;

/**
 * A one-shot signal between the threads of one parallel call (a phase ended, an expert's hidden rows are done).
 * A waiter polls for as long as a wait inside a call does ({@link Parallel#inCallSpinNanos()}: the pool's spin,
 * or a short fixed one while the machine is oversubscribed), then parks until {@link #open()}.
 */
public final class Signal {

    private volatile boolean open;
    private final ConcurrentLinkedQueue<Thread> parked = new ConcurrentLinkedQueue<>();

    public boolean isOpen() {
        return open;
    }

    /** Opens the signal for good and wakes every parked waiter. */
    public void open() {
        open = true;
        for (Thread t; (t = parked.poll()) != null; ) {
            LockSupport.unpark(t);
        }
    }

    /**
     * Returns once the signal is open or {@code nanos} have passed (parked, without the spin of {@link #await()});
     * says whether it is open.
     */
    boolean await(long nanos) {
        if (open) {
            return true;
        }
        Thread me = Thread.currentThread();
        parked.add(me);
        // re-checked after registering, as in await()
        if (!open) {
            LockSupport.parkNanos(this, nanos);
        }
        parked.remove(me);
        return open;
    }

    /** Returns once the signal is open. */
    public void await() {
        if (open) {
            return;
        }
        long spinUntil = System.nanoTime() + Parallel.inCallSpinNanos();
        while (!open && System.nanoTime() < spinUntil) {
            Thread.onSpinWait();
        }
        if (open) {
            return;
        }
        Thread me = Thread.currentThread();
        parked.add(me);
        // re-checked after registering: open() either sees this thread in the queue or was seen open here
        while (!open) {
            LockSupport.park(this);
        }
        parked.remove(me);
    }
}
