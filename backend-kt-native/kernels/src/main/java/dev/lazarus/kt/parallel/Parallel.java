package dev.lazarus.kt.parallel;

import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * A fixed pool of platform threads that splits index ranges into chunks. The calling thread works
 * too, and waits only for chunks that were actually claimed, so nested {@link #forRange} calls (from
 * inside a body) cannot deadlock even when every worker is busy: an unclaimed chunk is simply run
 * by the caller.
 *
 * <p>A decode step is a few dozen short parallel phases a few microseconds apart, so handing work
 * over through an executor queue and a latch (a futex wake-up per worker per pass, tens of
 * microseconds each) costs as much as the work. Instead workers and waiting callers spin for a
 * short while ({@link #SPIN_NANOS}, unless the machine is oversubscribed) before they park: back-to-back
 * passes never sleep, an idle pool stops burning CPU almost at once (which matters on a shared machine).
 * Phases that follow each other (attention's projections, heads and output) go in one
 * {@link #forPhases} call, so the threads stay in it between them; chunks are guided ({@link PhasedJob}). A thread
 * waiting in such a call for its next phase runs chunks of the pool's other calls meanwhile ({@link #helpOther}):
 * the serial work between two phases may itself be a parallel call, which would otherwise have one thread.
 */
public final class Parallel implements AutoCloseable {

    private static final class Shared {
        static final Parallel INSTANCE = new Parallel(Runtime.getRuntime().availableProcessors(), "kt-shared");
    }

    /**
     * How long an idle worker or a waiting caller polls before it parks (system property
     * {@code lazarus.kt.parallel.spin-micros}, default 50), while the machine is not oversubscribed.
     * When the load average exceeds twice the processors (our own busy threads count in it), a
     * spinning thread burns its share of a core while a parked one wakes with the scheduler's
     * favour: measured on a 2-core VM at load 12, decode ran 1.4x faster without spinning, so the
     * pool then parks at once. Below that, waking a parked worker for each of a decode step's ~40
     * passes leaves it idle a third of the time.
     */
    private static final long SPIN_NANOS = TimeUnit.MICROSECONDS.toNanos(
            Long.getLong("lazarus.kt.parallel.spin-micros", 50));
    /**
     * How long a thread waiting INSIDE a call (for the next phase, an expert's hidden rows, the call's last chunk)
     * polls before it parks even while the machine is oversubscribed (system property
     * {@code lazarus.kt.parallel.in-call-spin-micros}, default 10). Such a wait is for one small guided chunk of a
     * thread that is running now: a few microseconds, while parking costs a futex wake-up of the waiter that the
     * scheduler may serve only much later. An idle worker between calls still parks at once under load.
     */
    private static final long IN_CALL_SPIN_NANOS = TimeUnit.MICROSECONDS.toNanos(
            Long.getLong("lazarus.kt.parallel.in-call-spin-micros", 10));
    private static final long LOAD_CHECK_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final OperatingSystemMXBean OS = ManagementFactory.getOperatingSystemMXBean();
    private static volatile long spinNanos = SPIN_NANOS;
    private static volatile long loadCheckedAt = System.nanoTime();

    private final int threads;
    private final Worker[] workers;
    private final ConcurrentLinkedQueue<PhasedJob> jobs = new ConcurrentLinkedQueue<>();
    /** Calls posted and not yet over: a waiter looks through {@link #jobs} for another one only when there is one. */
    private final AtomicInteger inFlight = new AtomicInteger();
    /** Threads parked inside a call waiting for its next phase ({@link #parkHelper}): a new call wakes them to help. */
    private final ConcurrentLinkedQueue<Thread> parkedHelpers = new ConcurrentLinkedQueue<>();
    private volatile boolean closed;

    private Parallel(int threads, String name) {
        if (threads < 1) {
            throw new IllegalArgumentException("threads must be ≥ 1, got " + threads);
        }
        this.threads = threads;
        this.workers = new Worker[threads - 1];
        for (int i = 0; i < workers.length; i++) {
            workers[i] = new Worker();
            workers[i].thread = Thread.ofPlatform().daemon().name(name + "-" + i).start(workers[i]);
        }
    }

    /** The process-wide pool with one thread per available processor. */
    public static Parallel shared() {
        return Shared.INSTANCE;
    }

    /** A new pool of {@code n} threads (the caller counts as one); close it when done. */
    public static Parallel ofThreads(int n) {
        return new Parallel(n, "kt-pool");
    }

    public int threads() {
        return threads;
    }

    /** Runs {@code body} over {@code [0, n)} in chunks on the pool's threads and returns when all are done. */
    public void forRange(int n, IntRangeBody body) {
        forRange(n, 1, body);
    }

    /**
     * As {@link #forRange(int, IntRangeBody)}, with chunk boundaries on multiples of {@code grain}
     * (for example to keep a block of rows together).
     */
    public void forRange(int n, int grain, IntRangeBody body) {
        if (n <= 0) {
            return;
        }
        if (workers.length == 0 || n <= grain || closed) {
            body.run(0, n);
            return;
        }
        run(rangeJob(n, grain, body), (n + grain - 1) / grain - 1, 0, null);
    }

    /**
     * As {@link #forRange(int, int, IntRangeBody)}, with {@code meanwhile} run by the calling thread once the workers
     * have been handed the chunks and before it claims any itself: serial host work (a GPU launch, say) that would
     * otherwise delay the start of the parallel work or wait for its end. Returns when both are done; a failure of
     * {@code meanwhile} is thrown once the chunks have ended (they may use buffers its caller frees).
     */
    public void forRange(int n, int grain, IntRangeBody body, Runnable meanwhile) {
        if (workers.length == 0 || n <= grain || closed) {
            meanwhile.run();
            if (n > 0) {
                body.run(0, n);
            }
            return;
        }
        run(rangeJob(n, grain, body), (n + grain - 1) / grain - 1, 0, meanwhile);
    }

    /** One phase of {@code n} indices in chunks on multiples of {@code grain}. */
    private PhasedJob rangeJob(int n, int grain, IntRangeBody body) {
        return new PhasedJob(this, new PhasedBody() {
            @Override
            public int open(int phase) {
                return n;
            }

            @Override
            public void run(int phase, int from, int to) {
                body.run(from, to);
            }

            @Override
            public int grain(int phase) {
                return grain;
            }
        }, 1, threads);
    }

    /**
     * Tokens from which per-token work (norms, rope, residual adds, expert sums, activation conversion) runs on the
     * pool: for a prompt it is serial work that many threads would otherwise wait for; for a decode step of a few
     * tokens a pass costs more than the work.
     */
    public static final int PER_TOKEN_MINIMUM = 16;

    /**
     * Per-token work over {@code [0, n)}: as {@link #forRange(int, IntRangeBody)} from {@link #PER_TOKEN_MINIMUM}
     * tokens on, below that on the calling thread alone.
     */
    public void forTokens(int n, IntRangeBody body) {
        if (n < PER_TOKEN_MINIMUM) {
            if (n > 0) {
                body.run(0, n);
            }
        } else {
            forRange(n, body);
        }
    }

    /**
     * Runs {@code phases} phases of {@code body} one after the other on the pool's threads, each phase's indices
     * in chunks, and returns when the last is done. One call instead of a {@link #forRange} per phase: the
     * threads do not return to the caller between phases (and are not handed the next pass, or parked and woken,
     * in between), and the serial work between two phases runs on the calling thread once the earlier one is done.
     */
    public void forPhases(int phases, PhasedBody body) {
        if (workers.length == 0 || closed) {
            for (int p = 0; p < phases; p++) {
                int n = body.open(p);
                if (n > 0) {
                    body.run(p, 0, n);
                }
            }
            return;
        }
        long start = PhaseProfile.ON && phases > 1 ? System.nanoTime() : 0;
        run(new PhasedJob(this, body, phases, threads), workers.length, start, null);
    }

    private void run(PhasedJob job, int helpers, long start, Runnable meanwhile) {
        Throwable failed = null;
        if (!job.isOver()) {
            inFlight.incrementAndGet();
            try {
                jobs.add(job);
                wakeWorkers(Math.min(workers.length, helpers));
                for (Thread t : parkedHelpers) {
                    LockSupport.unpark(t);
                }
                if (meanwhile != null) {
                    try {
                        meanwhile.run();
                    } catch (RuntimeException | Error e) {
                        failed = e;
                    }
                }
                job.work();
                jobs.remove(job);
                job.awaitDone(inCallSpinNanos());
            } finally {
                inFlight.decrementAndGet();
            }
        } else if (meanwhile != null) {
            meanwhile.run();
        }
        if (start != 0) {
            PhaseProfile.call(System.nanoTime() - start, threads);
        }
        if (failed instanceof RuntimeException e) {
            throw e;
        } else if (failed != null) {
            throw (Error) failed;
        }
        job.rethrow();
    }

    /**
     * Runs one chunk of a job other than {@code waiting} (a thread waiting inside that job for its next phase), and
     * says whether it found one. Such a job is usually a call made from {@code waiting}'s serial work between two
     * phases, which every other thread of the pool is waiting in.
     */
    boolean helpOther(PhasedJob waiting) {
        if (inFlight.get() < 2) {
            return false;
        }
        for (PhasedJob job : jobs) {
            if (job != waiting && job.helpOnce()) {
                return true;
            }
        }
        return false;
    }

    /**
     * Parks a thread that waits inside {@code waiting} for the phase that {@code ended} announces, until that phase
     * opens, a call with chunks to claim is posted (the serial work before the phase may make one, a prompt's
     * per-token loop, say, well after the waiter stopped spinning), or {@code nanos} pass; says whether the phase
     * opened.
     */
    boolean parkHelper(PhasedJob waiting, Signal ended, long nanos) {
        Thread me = Thread.currentThread();
        parkedHelpers.add(me);
        try {
            // re-checked after registering: a call posted from now on unparks this thread
            for (PhasedJob job : jobs) {
                if (job != waiting && job.hasChunkToClaim()) {
                    return ended.isOpen();
                }
            }
            return ended.await(nanos);
        } finally {
            parkedHelpers.remove(me);
        }
    }

    /** {@link #SPIN_NANOS}, or 0 while the load average (checked once a second) exceeds twice the processors. */
    static long spinNanos() {
        long now = System.nanoTime();
        if (now - loadCheckedAt > LOAD_CHECK_NANOS) {
            loadCheckedAt = now;
            double load = OS.getSystemLoadAverage();
            spinNanos = load > 2 * OS.getAvailableProcessors() ? 0 : SPIN_NANOS;
        }
        return spinNanos;
    }

    /** How long a wait inside a call polls: {@link #spinNanos()}, but at least {@link #IN_CALL_SPIN_NANOS}. */
    static long inCallSpinNanos() {
        return Math.max(spinNanos(), IN_CALL_SPIN_NANOS);
    }

    private void wakeWorkers(int wanted) {
        for (int i = 0, woken = 0; i < workers.length && woken < wanted; i++) {
            if (workers[i].parked) {
                LockSupport.unpark(workers[i].thread);
                woken++;
            }
        }
    }

    /** Stops the threads of a pool made by {@link #ofThreads}; the shared pool ignores this. */
    @Override
    public void close() {
        if (this == Shared.INSTANCE || closed) {
            return;
        }
        closed = true;
        for (Worker w : workers) {
            LockSupport.unpark(w.thread);
        }
    }

    private final class Worker implements Runnable {
        volatile boolean parked;
        Thread thread;

        @Override
        public void run() {
            long idleSince = System.nanoTime();
            while (!closed) {
                PhasedJob job = jobs.peek();
                if (job != null) {
                    if (job.hasWork()) {
                        job.work();
                    } else {
                        jobs.remove(job);
                    }
                    idleSince = System.nanoTime();
                } else if (System.nanoTime() - idleSince < spinNanos()) {
                    Thread.onSpinWait();
                } else {
                    parked = true;
                    // re-checked after announcing the park: a poster either sees the flag or its job is visible here
                    if (jobs.isEmpty() && !closed) {
                        LockSupport.park(this);
                    }
                    parked = false;
                    idleSince = System.nanoTime();
                }
            }
        }
    }
}
