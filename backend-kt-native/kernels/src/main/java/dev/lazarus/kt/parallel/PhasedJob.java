package dev.lazarus.kt.parallel;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.locks.LockSupport;

/**
 * One {@link Parallel#forRange} or {@link Parallel#forPhases} call: each phase's indices are claimed in guided
 * chunks by whichever thread comes first; once a phase's last chunk is done the calling thread opens the next one
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

    /**
     * One phase: {@code units} chunks-to-be of {@code grain} indices, the next unclaimed one and the count not done.
     * The two counters, which every claim and every thread's exit from the phase write, sit on cache lines of their own
     * ({@link #NEXT}, {@link #UNFINISHED}): next to the phase's read-only fields or to the {@link #ended} flag that the
     * waiting threads poll, each write would take the line from every thread reading it (at 16 threads most of the
     * idle time inside a decode step's short phases went there).
     */
    private static final class Phase {
        /** Indices into {@link #counters}, 64 bytes apart and away from the array's header. */
        private static final int NEXT = 16, UNFINISHED = 32;
        final int index, n, grain, units, minChunk;
        private final AtomicIntegerArray counters = new AtomicIntegerArray(UNFINISHED + 16);
        /** Opened once the next phase is published (or the job is over). */
        final Signal ended = new Signal();
        /** Opened when every unit is done by a thread other than the {@link #opener}, which then opens the next phase. */
        final Signal done = new Signal();
        /** When it was opened, for {@link PhaseProfile}. */
        final long openedAt = PhaseProfile.ON ? System.nanoTime() : 0;

        Phase(int index, int n, int grain, int threads) {
            this.index = index;
            this.n = n;
            this.grain = grain;
            this.units = (n + grain - 1) / grain;
            this.minChunk = Math.max(1, units / (MIN_CHUNKS_PER_THREAD * threads));
            counters.set(UNFINISHED, units);
        }

        int next() {
            return counters.get(NEXT);
        }

        /** Claims {@code [from, from + count)} and returns {@code from} (past {@link #units} once all are claimed). */
        int claim(int count) {
            return counters.getAndAdd(NEXT, count);
        }

        /** Counts {@code done} units finished and says whether they were the phase's last. */
        boolean finished(int done) {
            return counters.addAndGet(UNFINISHED, -done) == 0;
        }
    }

    private final Parallel pool;
    private final PhasedBody body;
    private final int phases, threads;
    /**
     * The calling thread, which opens every phase after the first ({@link PhasedBody#open}: the serial work between
     * two phases). Opened by whichever thread finished the phase before, that work ran on a different core each time,
     * and every vector it reads or writes (the residual stream, the norms, the activations, the router's logits) was
     * first pulled over from the core of the previous opening: at 16 threads the openings took a third of a decode step.
     */
    private final Thread opener = Thread.currentThread();
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
        return p != null && (p.next() < p.units || p.index < phases - 1);
    }

    /**
     * Runs chunks until none is left to claim in the last phase (waiting for each next phase to open). A thread counts
     * the units it ran in a phase as finished once, when it finds none left to claim there, not after each chunk: one
     * write of the shared count per thread and phase.
     */
    void work() {
        Phase joined = null;
        for (Phase p = current; p != null; p = current) {
            if (profiled && joined != p) {
                joined = p;
                PhaseProfile.joined(p.index, System.nanoTime() - p.openedAt);
            }
            int done = 0;
            for (int ran; (ran = claimAndRun(p)) > 0; ) {
                done += ran;
            }
            if (done > 0 && p.finished(done)) {
                completed(p);
            }
            if (p.index == phases - 1) {
                return;
            }
            awaitNextPhase(p);
        }
    }

    /** Whether a chunk of the current phase is left to claim. */
    boolean hasChunkToClaim() {
        Phase p = current;
        return p != null && p.next() < p.units;
    }

    /**
     * Runs one chunk of the current phase if one is left to claim, and says whether there was one; never waits for
     * a next phase. For a thread that waits inside another job ({@link Parallel#helpOther}).
     */
    boolean helpOnce() {
        Phase p = current;
        if (p == null) {
            return false;
        }
        int ran = claimAndRun(p);
        if (ran > 0 && p.finished(ran)) {
            completed(p);
        }
        return ran > 0;
    }

    /**
     * Claims and runs the next guided chunk of {@code p}, and returns its units (0: none was left to claim); the caller
     * counts them finished. One atomic add claims it, never retried: its size is computed from a read just before,
     * which a concurrent claim may have made stale (the chunk is then cut at the phase's end, or a little larger).
     */
    private int claimAndRun(Phase p) {
        int seen = p.next();
        if (seen >= p.units) {
            return 0;
        }
        int count = Math.max(p.minChunk, (p.units - seen) / (GUIDE * threads));
        int from = p.claim(count);
        if (from >= p.units) {
            return 0;
        }
        int to = Math.min(p.units, from + count);
        runChunk(p, from, to);
        return to - from;
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
            if (profiled) {
                PhaseProfile.chunk(p.index, System.nanoTime() - start);
            }
        }
    }

    /**
     * Called by the thread that finished {@code p}'s last units: opens the next phase, or hands that to the
     * {@link #opener} (waiting inside the job for it: it is still in {@link #work} until the last phase).
     */
    private void completed(Phase p) {
        if (Thread.currentThread() == opener || p.index == phases - 1 || failure != null) {
            end(p);
        } else {
            p.done.open();
        }
    }

    /** Opens the phase after {@code p} (or ends the job). */
    private void end(Phase p) {
        if (profiled) {
            PhaseProfile.ended(p.index, System.nanoTime() - p.openedAt);
        }
        Phase next = failure == null ? open(p.index + 1) : null;
        current = next;
        p.ended.open();
        p.done.open();
        if (next == null) {
            Thread w = waiter;
            if (w != null) {
                LockSupport.unpark(w);
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
        boolean opens = Thread.currentThread() == opener;
        Signal awaited = opens ? p.done : p.ended;
        long spinUntil = System.nanoTime() + Parallel.inCallSpinNanos();
        while (!p.ended.isOpen()) {
            if (opens && p.done.isOpen()) {
                end(p);
            } else if (pool.helpOther(this)) {
                spinUntil = System.nanoTime() + Parallel.inCallSpinNanos();
            } else if (System.nanoTime() < spinUntil) {
                Thread.onSpinWait();
            } else if (!pool.parkHelper(this, awaited, HELP_POLL_NANOS)) {
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
