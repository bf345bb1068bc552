package dev.lazarus.kt.parallel;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * One {@link Parallel#forRange} or {@link Parallel#forPhases} call: each phase's indices are claimed in guided
 * chunks by whichever thread comes first; the thread that finishes a phase's last chunk opens the next one
 * ({@link PhasedBody#open}) while the others wait inside the job for it.
 *
 * <p>Guided chunks: each claim takes {@code remaining / (GUIDE · threads)} units, at least
 * {@code units / (MIN_CHUNKS_PER_THREAD · threads)}, so the first claims are large (few per phase) and the
 * last small: the thread that runs out of work first waits at most one small chunk for the other. With fixed
 * chunks of an eighth of a pass (the earlier split) the caller waited for the worker 9 % of a decode step at
 * two threads, and the worker idled 12 % (JFR, Q4_K_M bench model, quiet machine). The first chunk stays
 * at an eighth of the phase at two threads: a thread that is preempted while holding a larger one (a
 * shared, oversubscribed machine) would stall the phase for longer.
 */
final class PhasedJob {

    private static final int GUIDE = 4;
    private static final int MIN_CHUNKS_PER_THREAD = 16;
    /**
     * How long a thread parked while waiting for the next phase sleeps before it looks again: it is unparked when the
     * phase opens and when a call it could help is posted ({@link Parallel#parkHelper}); this only bounds a wake-up
     * that went astray.
     */
    private static final long HELP_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    /** One phase: {@code units} chunks-to-be of {@code grain} indices, the next unclaimed one and the count not done. */
    private static final class Phase {
        final int index, n, grain, units, minChunk;
        final AtomicInteger next = new AtomicInteger();
        final AtomicInteger unfinished;
        /** Opened once the next phase is published (or the job is over). */
        final Signal ended = new Signal();
        /** When it was opened, for {@link PhaseProfile}. */
        final long openedAt = PhaseProfile.ON ? System.nanoTime() : 0;

        Phase(int index, int n, int grain, int threads) {
            this.index = index;
            this.n = n;
            this.grain = grain;
            this.units = (n + grain - 1) / grain;
            this.minChunk = Math.max(1, units / (MIN_CHUNKS_PER_THREAD * threads));
            this.unfinished = new AtomicInteger(units);
        }
    }

    private final Parallel pool;
    private final PhasedBody body;
    private final int phases, threads;
    /** Whether this call's phases are recorded ({@link PhaseProfile}): a forward pass's, not a single range's. */
    private final boolean profiled;
    /** The phase being worked on; null once the job is over (every phase done, or a failure). */
    private volatile Phase current;
    private volatile Thread waiter;
    private volatile Throwable failure;

    /** Opens the first non-empty phase on the calling thread. */
    PhasedJob(Parallel pool, PhasedBody body, int phases, int threads) {
        this.pool = pool;
        this.body = body;
        this.phases = phases;
        this.threads = threads;
        this.profiled = PhaseProfile.ON && phases > 1;
        this.current = open(0);
    }

    boolean isOver() {
        return current == null;
    }

    /** Whether a thread joining now would find work: chunks left to claim, or a phase still to come. */
    boolean hasWork() {
        Phase p = current;
        return p != null && (p.next.get() < p.units || p.index < phases - 1);
    }

    /** Runs chunks until none is left to claim in the last phase (waiting for each next phase to open). */
    void work() {
        Phase joined = null;
        for (Phase p = current; p != null; p = current) {
            if (profiled && joined != p) {
                joined = p;
                PhaseProfile.joined(p.index, System.nanoTime() - p.openedAt);
            }
            if (!claimChunk(p)) {
                if (p.index == phases - 1) {
                    return;
                }
                awaitNextPhase(p);
            }
        }
    }

    /** Whether a chunk of the current phase is left to claim. */
    boolean hasChunkToClaim() {
        Phase p = current;
        return p != null && p.next.get() < p.units;
    }

    /**
     * Runs one chunk of the current phase if one is left to claim, and says whether there was one; never waits for
     * a next phase. For a thread that waits inside another job ({@link Parallel#helpOther}).
     */
    boolean helpOnce() {
        Phase p = current;
        return p != null && claimChunk(p);
    }

    /** Claims and runs the next guided chunk of {@code p}; false when none was left to claim. */
    private boolean claimChunk(Phase p) {
        while (true) {
            int from = p.next.get();
            if (from >= p.units) {
                return false;
            }
            int to = Math.min(p.units, from + Math.max(p.minChunk, (p.units - from) / (GUIDE * threads)));
            if (p.next.compareAndSet(from, to)) {
                runChunk(p, from, to);
                return true;
            }
        }
    }

    private void runChunk(Phase p, int from, int to) {
        long start = profiled ? System.nanoTime() : 0;
        try {
            if (failure == null) {
                body.run(p.index, from * p.grain, Math.min(p.n, to * p.grain));
            }
        } catch (Throwable t) {
            fail(t);
        } finally {
            long end = 0;
            if (profiled) {
                end = System.nanoTime();
                PhaseProfile.chunk(p.index, end - start);
            }
            if (p.unfinished.addAndGet(from - to) == 0) {
                if (profiled) {
                    PhaseProfile.ended(p.index, end - p.openedAt);
                }
                Phase next = failure == null ? open(p.index + 1) : null;
                current = next;
                p.ended.open();
                if (next == null) {
                    Thread w = waiter;
                    if (w != null) {
                        LockSupport.unpark(w);
                    }
                }
            }
        }
    }

    /** The first phase from {@code index} on with work, opened; null when none is left (or opening failed). */
    private Phase open(int index) {
        try {
            for (int i = index; i < phases; i++) {
                long start = profiled ? System.nanoTime() : 0;
                int n = body.open(i);
                if (profiled) {
                    PhaseProfile.opened(i, System.nanoTime() - start);
                }
                if (n > 0) {
                    return new Phase(i, n, body.grain(i), threads);
                }
            }
        } catch (Throwable t) {
            fail(t);
        }
        return null;
    }

    /**
     * Waits for the phase after {@code p} while helping the pool's other jobs: the serial work between two phases
     * ({@link PhasedBody#open}) may itself be a parallel call (a prompt's per-token work, an activation conversion),
     * which the threads waiting here would otherwise leave to the opening thread alone.
     */
    private void awaitNextPhase(Phase p) {
        long spinUntil = System.nanoTime() + Parallel.inCallSpinNanos();
        while (!p.ended.isOpen()) {
            if (pool.helpOther(this)) {
                spinUntil = System.nanoTime() + Parallel.inCallSpinNanos();
            } else if (System.nanoTime() < spinUntil) {
                Thread.onSpinWait();
            } else if (!pool.parkHelper(this, p.ended, HELP_POLL_NANOS)) {
                // a call to help was posted (or the poll ran out): look again, briefly
                spinUntil = System.nanoTime() + Parallel.inCallSpinNanos();
            }
        }
    }

    /** Waits (spinning for {@code spinNanos}, then parked) until the job is over. */
    void awaitDone(long spinNanos) {
        long spinUntil = System.nanoTime() + spinNanos;
        while (!isOver()) {
            if (System.nanoTime() < spinUntil) {
                Thread.onSpinWait();
                continue;
            }
            waiter = Thread.currentThread();
            // re-checked after publishing the waiter: the last chunk either sees it or finished before
            while (!isOver()) {
                LockSupport.park(this);
            }
        }
    }

    private void fail(Throwable t) {
        if (failure == null) {
            failure = t;
        }
    }

    void rethrow() {
        Throwable t = failure;
        if (t instanceof RuntimeException re) {
            throw re;
        } else if (t instanceof Error err) {
            throw err;
        } else if (t != null) {
            throw new IllegalStateException(t);
        }
    }
}
