package dev.lazarus.kt.parallel;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Test;

class PhaseChainTest {

    /** A part that records its openings, counts its indices and splits on {@code grain}. */
    private record Recording(String name, int[] sizes, int grain, ConcurrentLinkedQueue<String> openings,
                             AtomicIntegerArray done, AtomicIntegerArray misaligned) implements PhasedBody {

        Recording(String name, int[] sizes, int grain, ConcurrentLinkedQueue<String> openings) {
            this(name, sizes, grain, openings, new AtomicIntegerArray(sizes.length), new AtomicIntegerArray(sizes.length));
        }

        @Override
        public int open(int phase) {
            openings.add(name + phase);
            return sizes[phase];
        }

        @Override
        public void run(int phase, int from, int to) {
            if (from % grain != 0) {
                misaligned.incrementAndGet(phase);
            }
            done.addAndGet(phase, to - from);
        }

        @Override
        public int grain(int phase) {
            return grain;
        }
    }

    @Test
    void partsRunOneAfterTheOtherEveryPhaseOpenedOnceInOrderAlsoWithoutIndices() {
        for (int threads : new int[] {1, 4}) {
            try (Parallel p = Parallel.ofThreads(threads)) {
                ConcurrentLinkedQueue<String> openings = new ConcurrentLinkedQueue<>();
                Recording a = new Recording("a", new int[] {64, 0, 7}, 1, openings);
                Recording b = new Recording("b", new int[] {0}, 1, openings);
                Recording c = new Recording("c", new int[] {160, 0}, 16, openings);
                PhaseChain chain = new PhaseChain(List.of(
                        new PhaseChain.Part(3, a), new PhaseChain.Part(1, b), new PhaseChain.Part(2, c)));

                assertThat(chain.phases()).isEqualTo(6);
                chain.run(p);

                assertThat(openings).containsExactly("a0", "a1", "a2", "b0", "c0", "c1");
                for (Recording r : List.of(a, b, c)) {
                    for (int q = 0; q < r.sizes().length; q++) {
                        assertThat(r.done().get(q)).as("%s's phase %d", r.name(), q).isEqualTo(r.sizes()[q]);
                        assertThat(r.misaligned().get(q)).as("%s's phase %d off its grain", r.name(), q).isZero();
                    }
                }
            }
        }
    }

    /**
     * Every phase after the first is opened by the calling thread, whichever thread finished the phase before: the
     * serial work between two phases then stays on one core (its vectors in that core's cache).
     */
    @Test
    void theCallerOpensEveryPhase() {
        try (Parallel p = Parallel.ofThreads(4)) {
            int phases = 200;
            ConcurrentLinkedQueue<Thread> openers = new ConcurrentLinkedQueue<>();
            AtomicIntegerArray done = new AtomicIntegerArray(phases);
            p.forPhases(phases, new PhasedBody() {
                @Override
                public int open(int phase) {
                    openers.add(Thread.currentThread());
                    return 64;
                }

                @Override
                public void run(int phase, int from, int to) {
                    // long enough for every thread to take chunks, so the last one is often another thread's
                    long until = System.nanoTime() + 2_000;
                    while (System.nanoTime() < until) {
                        Thread.onSpinWait();
                    }
                    done.addAndGet(phase, to - from);
                }
            });
            assertThat(openers).hasSize(phases).containsOnly(Thread.currentThread());
            for (int q = 0; q < phases; q++) {
                assertThat(done.get(q)).as("phase %d", q).isEqualTo(64);
            }
        }
    }
}
