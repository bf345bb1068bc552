package dev.lazarus.kt.parallel;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Test;

class ParallelTest {

    @Test
    void everyIndexIsVisitedExactlyOnce() {
        try (Parallel p = Parallel.ofThreads(3)) {
            for (int n : new int[] {1, 2, 7, 100, 1001}) {
                AtomicIntegerArray seen = new AtomicIntegerArray(n);
                p.forRange(n, (s, e) -> {
                    for (int i = s; i < e; i++) {
                        seen.incrementAndGet(i);
                    }
                });
                for (int i = 0; i < n; i++) {
                    assertThat(seen.get(i)).as("index %d of %d", i, n).isEqualTo(1);
                }
            }
        }
    }

    /**
     * The caller's {@code meanwhile} runs once, on the calling thread, after the workers were handed the chunks (they
     * start on them while it runs: the GPU layer path launches the GPU's experts there while the CPU's are computed);
     * every chunk still runs once, and a failure of {@code meanwhile} comes out after the chunks have ended.
     */
    @Test
    void meanwhileRunsOnTheCallerWhileTheWorkersTakeTheChunks() throws Exception {
        try (Parallel p = Parallel.ofThreads(4)) {
            Thread caller = Thread.currentThread();
            AtomicIntegerArray seen = new AtomicIntegerArray(64);
            java.util.concurrent.atomic.AtomicInteger byWorkers = new java.util.concurrent.atomic.AtomicInteger();
            java.util.concurrent.atomic.AtomicInteger runs = new java.util.concurrent.atomic.AtomicInteger();
            java.util.concurrent.atomic.AtomicBoolean overlapped = new java.util.concurrent.atomic.AtomicBoolean();
            p.forRange(64, 1, (s, e) -> {
                for (int i = s; i < e; i++) {
                    seen.incrementAndGet(i);
                }
                if (Thread.currentThread() != caller) {
                    byWorkers.incrementAndGet();
                }
            }, () -> {
                assertThat(Thread.currentThread()).isSameAs(caller);
                runs.incrementAndGet();
                long until = System.nanoTime() + 10_000_000_000L;
                while (byWorkers.get() == 0 && System.nanoTime() < until) {
                    Thread.onSpinWait();
                }
                overlapped.set(byWorkers.get() > 0);
            });
            assertThat(runs.get()).isEqualTo(1);
            assertThat(overlapped.get()).as("a worker ran a chunk while meanwhile ran").isTrue();
            for (int i = 0; i < 64; i++) {
                assertThat(seen.get(i)).isEqualTo(1);
            }

            AtomicIntegerArray after = new AtomicIntegerArray(64);
            assertThatThrownBy(() -> p.forRange(64, 1, (s, e) -> {
                for (int i = s; i < e; i++) {
                    after.incrementAndGet(i);
                }
            }, () -> {
                throw new IllegalStateException("launch failed");
            })).isInstanceOf(IllegalStateException.class).hasMessage("launch failed");
            for (int i = 0; i < 64; i++) {
                assertThat(after.get(i)).as("chunk %d ended before the failure came out", i).isEqualTo(1);
            }
        }
        try (Parallel alone = Parallel.ofThreads(1)) {
            StringBuilder order = new StringBuilder();
            alone.forRange(4, 1, (s, e) -> order.append("rows "), () -> order.append("meanwhile "));
            assertThat(order.toString()).isEqualTo("meanwhile rows ");
        }
    }

    @Test
    void chunksRespectTheGrain() {
        try (Parallel p = Parallel.ofThreads(4)) {
            p.forRange(100, 8, (s, e) -> assertThat(s % 8).isZero());
        }
    }

    @Test
    void nestedRangesDoNotDeadlock() {
        try (Parallel p = Parallel.ofThreads(2)) {
            AtomicIntegerArray seen = new AtomicIntegerArray(64);
            p.forRange(8, (s, e) -> {
                for (int i = s; i < e; i++) {
                    int outer = i;
                    p.forRange(8, (s2, e2) -> {
                        for (int j = s2; j < e2; j++) {
                            seen.incrementAndGet(outer * 8 + j);
                        }
                    });
                }
            });
            for (int i = 0; i < 64; i++) {
                assertThat(seen.get(i)).isEqualTo(1);
            }
        }
    }

    /**
     * A parallel call made by the serial work between two phases is shared with the threads waiting for the next
     * phase: before, they waited parked while the opening thread ran the whole call alone.
     */
    @Test
    void threadsWaitingForTheNextPhaseHelpACallMadeWhileItOpens() {
        try (Parallel p = Parallel.ofThreads(3)) {
            Set<Thread> nestedThreads = ConcurrentHashMap.newKeySet();
            AtomicIntegerArray seen = new AtomicIntegerArray(24);
            p.forPhases(2, new PhasedBody() {
                @Override
                public int open(int phase) {
                    if (phase == 1) {
                        p.forRange(seen.length(), (s, e) -> {
                            nestedThreads.add(Thread.currentThread());
                            for (int i = s; i < e; i++) {
                                seen.incrementAndGet(i);
                                sleep(2);
                            }
                        });
                    }
                    return 3;
                }

                @Override
                public void run(int phase, int from, int to) {
                    sleep(1);
                }
            });
            for (int i = 0; i < seen.length(); i++) {
                assertThat(seen.get(i)).as("index %d", i).isEqualTo(1);
            }
            assertThat(nestedThreads).as("threads that ran the call made while opening phase 1").hasSizeGreaterThan(1);
        }
    }

    /**
     * A thread parked while it waits for the next phase is woken by a call posted from the phase's opening long after
     * it stopped spinning: the call (24 ms on one thread) is far shorter than the parked waiter's own poll (50 ms),
     * so only the wake-up lets another thread help.
     */
    @Test
    void aCallPostedLongAfterTheWaitersParkedWakesThemToHelp() {
        try (Parallel p = Parallel.ofThreads(3)) {
            Set<Thread> nestedThreads = ConcurrentHashMap.newKeySet();
            AtomicIntegerArray seen = new AtomicIntegerArray(24);
            p.forPhases(2, new PhasedBody() {
                @Override
                public int open(int phase) {
                    if (phase == 1) {
                        sleep(5);
                        p.forRange(seen.length(), (s, e) -> {
                            nestedThreads.add(Thread.currentThread());
                            for (int i = s; i < e; i++) {
                                seen.incrementAndGet(i);
                                sleep(1);
                            }
                        });
                    }
                    return 3;
                }

                @Override
                public void run(int phase, int from, int to) {}
            });
            for (int i = 0; i < seen.length(); i++) {
                assertThat(seen.get(i)).as("index %d", i).isEqualTo(1);
            }
            assertThat(nestedThreads).as("threads that ran the call posted 5 ms into opening phase 1").hasSizeGreaterThan(1);
        }
    }

    /** Each phase splits on its own grain, asked after its opening (a block of rows kept together). */
    @Test
    void eachPhaseChunksOnItsOwnGrain() {
        try (Parallel p = Parallel.ofThreads(4)) {
            int[] sizes = {160, 50, 96};
            int[] grains = {16, 1, 32};
            AtomicIntegerArray done = new AtomicIntegerArray(sizes.length);
            AtomicIntegerArray misaligned = new AtomicIntegerArray(sizes.length);
            p.forPhases(sizes.length, new PhasedBody() {
                @Override
                public int open(int phase) {
                    return sizes[phase];
                }

                @Override
                public void run(int phase, int from, int to) {
                    if (from % grains[phase] != 0 || (to != sizes[phase] && to % grains[phase] != 0)) {
                        misaligned.incrementAndGet(phase);
                    }
                    done.addAndGet(phase, to - from);
                }

                @Override
                public int grain(int phase) {
                    return grains[phase];
                }
            });
            for (int q = 0; q < sizes.length; q++) {
                assertThat(done.get(q)).as("indices of phase %d", q).isEqualTo(sizes[q]);
                assertThat(misaligned.get(q)).as("chunks of phase %d off its grain", q).isZero();
            }
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void failuresReachTheCaller() {
        try (Parallel p = Parallel.ofThreads(3)) {
            assertThatThrownBy(() -> p.forRange(50, (s, e) -> {
                if (s > 0) {
                    throw new IllegalStateException("boom at " + s);
                }
            })).isInstanceOf(IllegalStateException.class).hasMessageContaining("boom");
        }
    }

    @Test
    void phasesRunInOrderWithTheirOpeningOnceEach() {
        for (int threads : new int[] {1, 3}) {
            try (Parallel p = Parallel.ofThreads(threads)) {
                int[] sizes = {40, 0, 1, 333};
                AtomicIntegerArray done = new AtomicIntegerArray(sizes.length);
                AtomicIntegerArray opened = new AtomicIntegerArray(sizes.length);
                AtomicIntegerArray early = new AtomicIntegerArray(sizes.length);
                p.forPhases(sizes.length, new PhasedBody() {
                    @Override
                    public int open(int phase) {
                        opened.incrementAndGet(phase);
                        if (phase > 0 && done.get(phase - 1) != sizes[phase - 1]) {
                            early.incrementAndGet(phase);
                        }
                        return sizes[phase];
                    }

                    @Override
                    public void run(int phase, int from, int to) {
                        for (int q = 0; q < phase; q++) {
                            if (done.get(q) != sizes[q]) {
                                early.incrementAndGet(phase);
                            }
                        }
                        done.addAndGet(phase, to - from);
                    }
                });
                for (int q = 0; q < sizes.length; q++) {
                    assertThat(opened.get(q)).as("openings of phase %d", q).isEqualTo(1);
                    assertThat(done.get(q)).as("indices of phase %d", q).isEqualTo(sizes[q]);
                    assertThat(early.get(q)).as("phase %d started before the earlier ones ended", q).isZero();
                }
            }
        }
    }

    @Test
    void aFailureInAPhaseOrItsOpeningReachesTheCallerAndEndsTheCall() {
        try (Parallel p = Parallel.ofThreads(3)) {
            AtomicIntegerArray later = new AtomicIntegerArray(1);
            assertThatThrownBy(() -> p.forPhases(3, new PhasedBody() {
                @Override
                public int open(int phase) {
                    if (phase == 1) {
                        throw new IllegalStateException("cannot open " + phase);
                    }
                    return 100;
                }

                @Override
                public void run(int phase, int from, int to) {
                    if (phase == 2) {
                        later.incrementAndGet(0);
                    }
                }
            })).isInstanceOf(IllegalStateException.class).hasMessageContaining("cannot open 1");
            assertThat(later.get(0)).isZero();
            assertThatThrownBy(() -> p.forPhases(2, new PhasedBody() {
                @Override
                public int open(int phase) {
                    return 50;
                }

                @Override
                public void run(int phase, int from, int to) {
                    if (phase == 0 && from > 0) {
                        throw new IllegalArgumentException("boom at " + from);
                    }
                }
            })).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("boom");
        }
    }

    @Test
    void sharedPoolHasOneThreadPerProcessor() {
        assertThat(Parallel.shared().threads()).isEqualTo(Runtime.getRuntime().availableProcessors());
        assertThatThrownBy(() -> Parallel.ofThreads(0)).isInstanceOf(IllegalArgumentException.class);
    }
}
